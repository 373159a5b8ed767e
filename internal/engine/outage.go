package engine

import (
	"sort"
	"sync"
	"time"
)

// Outage is a stretch of the step in which clients lost their
// connections to the server and connected again: a server that restarted,
// or crashed and recovered. Clients reconnect on their own (ensureConn);
// an outage says when, for how long there was no server, and what it cost.
type Outage struct {
	// Start is when the first client lost its connection, since the
	// measured window began (negative during warm-up).
	Start time.Duration
	// Server is when the first of them connected again: the server was
	// back. Back is when the last did, or the step's end when one never
	// did (AllBack false).
	Server, Back time.Duration
	AllBack      bool
	// Clients counts the connections lost (a client that lost its
	// connection twice in one outage counts twice); each was lost in a
	// transaction, which failed.
	Clients int
}

// lostConn is one client's stretch without a connection.
type lostConn struct{ from, to time.Time }

// outages collects the clients' lost connections; they are rare (the
// error path only), so a mutex is enough.
type outages struct {
	mu   sync.Mutex
	lost []lostConn
	open []time.Time // lost and not connected again when the step ended
}

// lostAt notes that a client's connection broke in a transaction at t.
func (c *client) lostAt(t time.Time) {
	if c.lost.IsZero() {
		c.lost = t
	}
}

// reconnected notes that a client that had lost its connection has a new
// one.
func (c *client) reconnected(t time.Time) {
	if c.lost.IsZero() {
		return
	}
	o := &c.e.outages
	o.mu.Lock()
	o.lost = append(o.lost, lostConn{c.lost, t})
	o.mu.Unlock()
	c.lost = time.Time{}
}

// outageList merges the clients' lost connections into outages: stretches
// that overlap are one. A client still without a connection counts until
// end, the step's end.
func (e *engine) outageList(window, end time.Time) []Outage {
	o := &e.outages
	o.mu.Lock()
	lost := append([]lostConn(nil), o.lost...)
	o.mu.Unlock()
	// A client still without a connection counts until the step's end,
	// or until the last of them lost its own when that was later: the
	// connections lost as the step was ending (a pooler that died stops
	// the step, and its clients see it a few milliseconds apart) are one
	// outage, not one each.
	until := end
	for _, c := range e.clients {
		if !c.lost.IsZero() {
			until = later(c.lost, until)
		}
	}
	open := map[int]bool{}
	for _, c := range e.clients {
		if !c.lost.IsZero() {
			open[len(lost)] = true
			lost = append(lost, lostConn{c.lost, until})
		}
	}
	if len(lost) == 0 {
		return nil
	}
	idx := make([]int, len(lost))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return lost[idx[a]].from.Before(lost[idx[b]].from) })
	var out []Outage
	var back, server time.Time
	for _, i := range idx {
		l := lost[i]
		if len(out) > 0 && !l.from.After(back) {
			cur := &out[len(out)-1]
			cur.Clients++
			if l.to.After(back) {
				back = l.to
			}
			if !open[i] && (server.IsZero() || l.to.Before(server)) {
				server = l.to
			}
			cur.AllBack = cur.AllBack && !open[i]
			cur.Back, cur.Server = back.Sub(window), server.Sub(window)
			continue
		}
		back, server = l.to, time.Time{}
		if !open[i] {
			server = l.to
		}
		out = append(out, Outage{Start: l.from.Sub(window), Back: back.Sub(window), Server: server.Sub(window), AllBack: !open[i], Clients: 1})
	}
	for i := range out {
		if out[i].Server < out[i].Start {
			out[i].Server = out[i].Back // nobody connected again: no server until the end
		}
	}
	return out
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
