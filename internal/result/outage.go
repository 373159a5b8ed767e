package result

import "fmt"

// Outage is a stretch of a step in which the clients lost their
// connections to the server and connected again: the server restarted
// (or crashed and recovered). The step's figures then mix what happened
// before, during and after it, and its evidence covers part of it.
type Outage struct {
	// AtS is when the first client lost its connection, in seconds since
	// the measured window began (the clock of Interval.StartS).
	AtS float64 `json:"at_s"`
	// ServerS is how long there was no server: from AtS until the first
	// client connected again (until the step's end when none did).
	ServerS float64 `json:"server_s"`
	// BackS is from AtS until the last client connected again; AllBack
	// says every client did before the step ended.
	BackS   float64 `json:"back_s"`
	AllBack bool    `json:"all_back"`
	// Clients counts the clients that lost their connection (one that
	// lost it twice counts twice), Failed the transactions that failed as
	// they did (one each).
	Clients int   `json:"clients"`
	Failed  int64 `json:"failed"`
	// PostmasterBefore and PostmasterAfter are the server's postmaster
	// pids before and after, when the process probe saw them change: a
	// restart confirmed; absent when the server is not visible here.
	PostmasterBefore int `json:"postmaster_before,omitempty"`
	PostmasterAfter  int `json:"postmaster_after,omitempty"`
	// Pooler, when set, says the clients lost the pooler in front of the
	// server, not the server: how it ended ("pgbouncer (pid 7314) was
	// killed by signal 9 (killed)"), which ended the step.
	Pooler string `json:"pooler,omitempty"`
}

// Restarted says the server's postmaster changed: a restart seen, not
// only lost connections.
func (o Outage) Restarted() bool {
	return o.PostmasterBefore != 0 && o.PostmasterAfter != 0 && o.PostmasterBefore != o.PostmasterAfter
}

// validate checks what readers of an outage rely on.
func (o *Outage) validate() error {
	if o.ServerS < 0 || o.BackS < o.ServerS || o.Clients < 1 || o.Failed < 0 {
		return fmt.Errorf("outage at %v s: %v s without a server, back at +%v s, %d clients, %d failed", o.AtS, o.ServerS, o.BackS, o.Clients, o.Failed)
	}
	return nil
}
