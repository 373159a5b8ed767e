package agent

// Share is one agent's part of a step: the contiguous client ids First to
// First+Clients-1, so that client_id and every client's random state are
// what a single process running all of them gives, and its share of -R.
type Share struct {
	First   int     `json:"first"`
	Clients int     `json:"clients"`
	Rate    float64 `json:"rate,omitempty"`
}

// Split deals clients to agents in contiguous ranges, the first agents one
// client larger when they do not divide evenly (an agent may get none), and
// rate in proportion to the clients: each client keeps the rate it has in a
// single process.
func Split(clients, agents int, rate float64) []Share {
	out := make([]Share, agents)
	first := 0
	for i := range out {
		n := clients / agents
		if i < clients%agents {
			n++
		}
		out[i] = Share{First: first, Clients: n}
		if rate > 0 && clients > 0 {
			out[i].Rate = rate * float64(n) / float64(clients)
		}
		first += n
	}
	return out
}
