package diagnose

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

// PoolWaitDominant is the share of the clients' time spent waiting for a
// server connection (the waiting clients' mean over the clients, by
// Little's law the share of each one's time) at or above which the pool
// is the limit when the server has idle CPU. Half: a pool whose clients
// wait more than they run keeps the server from half of the work the
// clients offer, and a pool large enough for the load shows none (a
// pgbouncer with a pool of 8 before 4 clients: 0 waiting).
const PoolWaitDominant = 0.5

// PoolServersBusy is the share of the pool's server connections that must
// be active, on average, to call them all busy when the machine's CPU is
// not in view (a remote server): with clients waiting an idle server
// connection is handed over at once, so a pool at its limit shows almost
// every one active.
const PoolServersBusy = 0.9

// PoolFigures are a step's pooler console figures as the verdicts read
// them (result.Pools' whole-pooler figures); Known is false without the
// pooler probe's evidence, and each Has flag says its figure was mapped.
type PoolFigures struct {
	Known bool
	// Setting names the pooler's pool size as its configuration says it,
	// "default_pool_size=4" (the built-in pgbouncer:), or "" (a proxy
	// definition's own files); Size is that size (0: not known).
	Setting string
	Size    float64

	HasWaiting       bool
	Waiting, WaitMax float64 // clients waiting for a server connection: mean, largest
	HasServers       bool
	Servers, Active  float64 // server connections: all of the pool's (active, idle, used), active; means
	// ServersMost is how many server connections the pool had at once:
	// the most seen active, or the mean of all when more (the pool opens
	// them as clients come, so the mean reads one low after its ramp).
	ServersMost float64
	// HasInXact says InXact is known: the server connections in a
	// transaction on average over the console's window, by the pooler's
	// own time in transactions (Little's law). It covers the whole
	// window, where the active gauge is a few samples of a moment each.
	HasInXact     bool
	InXact        float64
	HasMaxWait    bool
	MaxWaitMs     float64
	HasWaitPerTxn bool
	WaitPerTxnUS  float64
}

// poolFigures reads a step's pooler evidence.
func poolFigures(p *result.Pools) PoolFigures {
	if p == nil {
		return PoolFigures{}
	}
	t := p.Total
	f := PoolFigures{Known: true}
	if t.ClientsWaiting != nil {
		f.HasWaiting, f.Waiting, f.WaitMax = true, t.ClientsWaiting.Mean, t.ClientsWaiting.Max
	}
	if t.ServersActive != nil {
		f.HasServers, f.Active, f.Servers = true, t.ServersActive.Mean, t.ServersActive.Mean
		for _, g := range []*result.Gauge{t.ServersIdle, t.ServersUsed} {
			if g != nil {
				f.Servers += g.Mean
			}
		}
		f.ServersMost = max(t.ServersActive.Max, f.Servers)
	}
	if t.XactUS != nil && p.WindowS > 0 {
		f.HasInXact, f.InXact = true, *t.XactUS/(p.WindowS*1e6)
	}
	if t.MaxWaitMs != nil {
		f.HasMaxWait, f.MaxWaitMs = true, *t.MaxWaitMs
	}
	if t.WaitPerTxnUS != nil {
		f.HasWaitPerTxn, f.WaitPerTxnUS = true, *t.WaitPerTxnUS
	}
	return f
}

// poolSetting names the setting of a pooler's pool size where its
// configuration has one pgscale knows (pgbouncer's default_pool_size),
// and gives the size.
func poolSetting(p *result.Pooler) (string, float64) {
	if p == nil {
		return "", 0
	}
	if v, ok := p.Settings["default_pool_size"]; ok {
		n, _ := strconv.ParseFloat(v, 64)
		return "default_pool_size=" + v, n
	}
	return "", 0
}

// filling says the pool had not reached its size: fewer server
// connections than its setting allows and than there were clients to
// serve. Clients then waited for the connections the pooler was still
// opening, which a larger pool would not give them sooner: through a pool
// of 32 before 32 clients, under two CPU hogs, pgbouncer had opened 6 in a
// 3 s step, 27.8 clients waited on average, and the step was called
// pool-bound.
func (f Figures) filling() bool {
	return f.Pool.Size > 0 && f.Pool.HasServers && f.Pool.ServersMost < min(f.Pool.Size, float64(f.Clients))
}

// busy is how many of the pool's server connections were in use on
// average: in a transaction by the pooler's own time where it counts it,
// else the active gauge's mean. The gauge is a moment at each of a few
// samples (4 in a 3 s step): through a pool of 4 held by 32 clients, under
// six CPU hogs, it read 2.5 active of 3.5, and the step was not called
// pool-bound, while the pooler's time in transactions said 3 or more.
func (p PoolFigures) busy() float64 {
	if p.HasInXact {
		return p.InXact
	}
	return p.Active
}

// waitShare is the share of the clients' time spent waiting for a server
// connection: the waiting clients' mean over the step's clients.
func (f Figures) waitShare() float64 {
	if !f.Pool.HasWaiting || f.Clients <= 0 {
		return 0
	}
	return min(f.Pool.Waiting/float64(f.Clients), 1)
}

// PoolServerRoom is the share of its time a pool's backends may spend on
// a CPU or waiting for one and still have CPU to spare: under half, each
// server connection mostly sleeps, waits for the pooler or for the next
// query, and more of them would run more transactions at once. A pool on
// a CPU-bound server shows nearly all of it (a select-only load through a
// pool of 4 on 2 cores: 99 %), where a larger pool would only queue
// longer for the CPU.
const PoolServerRoom = 0.5

// poolBound says whether the pool is the limit: the clients spend at least
// PoolWaitDominant of their time waiting for a server connection, the
// pool is not still filling, the pool's server connections are all busy
// (when the console counts them), and the server has CPU to spare — its
// backends mostly neither on a CPU nor waiting for one nor in contention
// waits (the backends' time), or, without it, the machine's CPU not
// saturated.
//
// On a crowded machine (Figures.Crowded) the backends' wait for a CPU is
// the other processes' queue: room is then their own time on a CPU, and
// they must spend their time in their transactions rather than waiting
// for the pooler's next query (at most ClientDominant of the time they
// are not queued for a CPU, as for poolerBound): backends that wait for a
// pooler short of CPU are not short of server connections. Under two CPU
// hogs, 100 clients through pgbouncer's pool of 20 sending the empty query
// showed backends on a CPU 1 %, waiting for one 44 % and for pgbouncer 55 %
// of their time (not pool-bound); 32 clients holding a pool of 4 for 4 ms
// sleeps showed 1 %, 41-54 %, 11-20 % and sleeping the rest (pool-bound:
// a larger pool would run more sleeps at once; it was called cpu-bound
// when the wait for a CPU passed half of their time).
func poolBound(f Figures) bool {
	if !f.Pool.HasWaiting || f.waitShare() < PoolWaitDominant || f.filling() {
		return false
	}
	if f.Pool.HasServers && !(f.Pool.Servers > 0 && f.Pool.busy() >= PoolServersBusy*f.Pool.Servers) {
		return false
	}
	switch t := f.Time; {
	case t.Known && f.Crowded():
		return t.OnCPU < PoolServerRoom && t.Contention() < WaitDominant && t.In("Client") < ClientDominant*(1-t.CPUWait)
	case t.Known:
		return t.OnCPU+t.CPUWait < PoolServerRoom && t.Contention() < WaitDominant
	case f.HasHost:
		return !cpuSaturated(f)
	}
	return f.Pool.HasServers
}

// poolEvidence is the evidence line of a step with the pooler's console:
// "pools: on average 26.0 of 32 clients waited for one of 4.0 server
// connections (81% of their time), at most 28; longest wait 2.2 ms; 0.993
// ms waited per transaction".
func poolEvidence(f Figures) string {
	var parts []string
	if f.Pool.HasWaiting {
		s := fmt.Sprintf("on average %.1f of %s waited", f.Pool.Waiting, prose.Count(f.Clients, "client"))
		if f.Pool.HasServers {
			s += fmt.Sprintf(" for one of %.1f server connections (%.1f active)", f.Pool.Servers, f.Pool.Active)
		} else {
			s += " for a server connection"
		}
		s += fmt.Sprintf(", %s of their time, at most %.0f", prose.Share(f.waitShare()), f.Pool.WaitMax)
		parts = append(parts, s)
	} else if f.Pool.HasServers {
		parts = append(parts, fmt.Sprintf("%.1f server connections, %.1f active; no figure of waiting clients", f.Pool.Servers, f.Pool.Active))
	}
	if f.Pool.HasMaxWait {
		parts = append(parts, "longest wait "+msText(f.Pool.MaxWaitMs))
	}
	if f.Pool.HasWaitPerTxn {
		parts = append(parts, msText(f.Pool.WaitPerTxnUS/1000)+" waited per transaction")
	}
	if len(parts) == 0 {
		return ""
	}
	return "pools: " + strings.Join(parts, "; ")
}

// poolDetail is the pool-bound verdict's detail: "on average 28.0 of 32
// clients waited for one of 4 server connections (default_pool_size=4),
// 88% of their time; longest wait 12 ms; the machine 45% busy: the pool,
// not the server, is the limit".
func poolDetail(f Figures) string {
	s := fmt.Sprintf("on average %.1f of %s waited for ", f.Pool.Waiting, prose.Count(f.Clients, "client"))
	if f.Pool.HasServers {
		s += fmt.Sprintf("one of %.0f server connections", f.Pool.ServersMost)
	} else {
		s += "a server connection"
	}
	if f.Pool.Setting != "" {
		s += " (" + f.Pool.Setting + ")"
	}
	s += ", " + prose.Share(f.waitShare()) + " of their time"
	if f.Pool.HasMaxWait {
		s += "; longest wait " + msText(f.Pool.MaxWaitMs)
	}
	switch t := f.Time; {
	case t.Known && t.Schedstat:
		s += fmt.Sprintf("; their backends on a CPU %s of their time and waiting for one %s", prose.Share(t.OnCPU), prose.Share(t.CPUWait))
	case t.Known:
		s += fmt.Sprintf("; their backends on a CPU or waiting for one %s of their time", prose.Share(t.OnCPU))
	case f.HasHost:
		s += fmt.Sprintf("; the machine %s busy", prose.Share(f.MachineBusy))
	default:
		s += fmt.Sprintf("; %.1f of them active", f.Pool.Active)
	}
	return s + ": the pool, not the server, is the limit"
}

// poolExplain is the pool-bound verdict's sentences.
func poolExplain(at string, f Figures) string {
	s := fmt.Sprintf("%s the pool is the limit: %s.", at, poolDetail(f))
	if f.Pool.HasWaitPerTxn && f.LatencyMs > 0 {
		s += fmt.Sprintf(" Of a transaction's %s, %s is the wait for a server connection.", msText(f.LatencyMs), msText(f.Pool.WaitPerTxnUS/1000))
	}
	size := "the pool's size"
	if name, _, ok := strings.Cut(f.Pool.Setting, "="); ok {
		size = name
	}
	return s + fmt.Sprintf(" A larger pool (%s), up to what the server can run at once, would move the limit.", size)
}

// msText writes a duration in milliseconds with the digits it needs.
func msText(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.3f ms", ms)
}
