package compare

import (
	"math"

	"github.com/pgscale/pgscale/internal/result"
)

// UpstreamShare is one server behind a target over a client count's
// complete steps (its rounds): where the target's statements went, from
// the upstreams probe's evidence.
type UpstreamShare struct {
	Name, Role string
	// Count is its statements over those steps (its transactions where
	// pg_stat_statements was missing); Share its part of all the servers'.
	Count int64
	Share float64
	// Lo and Hi are its smallest and largest share in one step.
	Lo, Hi float64
}

// addUpstreams sets each point's Upstreams from the file's complete steps
// of its client count that recorded the upstreams evidence.
func addUpstreams(points []Point, f *result.File) {
	for i := range points {
		points[i].Upstreams = upstreamShares(f, points[i].Clients)
	}
}

// upstreamShares adds up the servers' statements (else transactions) over
// the complete steps of clients clients, in the order the probe lists the
// servers; nil when no step recorded several.
func upstreamShares(f *result.File, clients int) []UpstreamShare {
	var out []UpstreamShare
	at := map[string]int{}
	var total int64
	for _, s := range f.Steps {
		u := s.Probes.Upstreams()
		if s.Clients != clients || !s.Complete || u == nil || len(u.Servers) < 2 {
			continue
		}
		for _, sv := range u.Servers {
			key := sv.Name + "/" + sv.Role
			i, ok := at[key]
			if !ok {
				i = len(out)
				at[key] = i
				out = append(out, UpstreamShare{Name: sv.Name, Role: sv.Role, Lo: math.Inf(1), Hi: math.Inf(-1)})
			}
			n := sv.Transactions
			if sv.Statements != nil {
				n = *sv.Statements
			}
			out[i].Count += n
			total += n
			out[i].Lo, out[i].Hi = math.Min(out[i].Lo, sv.Share), math.Max(out[i].Hi, sv.Share)
		}
	}
	if total == 0 {
		return nil
	}
	for i := range out {
		out[i].Share = float64(out[i].Count) / float64(total)
	}
	return out
}
