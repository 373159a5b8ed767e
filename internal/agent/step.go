package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/result"
)

// A step on the agents: the plan sent, the barrier, the intervals and final
// reports collected, and their sum (Step); the coordinator itself, joining
// and closing, is coordinator.go.

// Outcome is what the agents did in the last step: each agent's part for
// the result file, and each agent's own result (its own file's step).
type Outcome struct {
	Agents  []result.StepAgent
	Results []*engine.Result
}

// Last is the outcome of the last step run; nil before the first.
func (c *Coordinator) Last() *Outcome { return c.last }

// AgentTotals are the run's figures per agent for the result file: its
// transactions over every step and its most certain clock offset.
func (c *Coordinator) AgentTotals() []result.Agent {
	var out []result.Agent
	for i, m := range c.members {
		a := result.Agent{Index: m.Index, Host: m.Host, SourceAddress: m.SourceAddress, PID: m.PID, Transactions: c.txns[i]}
		if b := c.best[i]; b.Uncertainty >= 0 {
			a.Offset = result.Offset{Ms: ms(b.Offset), UncertaintyMs: ms(b.Uncertainty)}
		}
		out = append(out, a)
	}
	return out
}

// agentState is what the coordinator knows of one agent during a step.
type agentState struct {
	share     Share
	intervals []IntervalReport
	final     *FinalReport
	state     string // the member's state for this step
	note      string
	silent    time.Duration // since its last heartbeat
}

// Step runs one step of cfg (a single process's settings for all of
// cfg.Clients) on the agents: it writes the step's plan, waits until every
// agent has connected its share of the clients, sets the start on the
// database server's clock, collects the agents' intervals as they come
// (passing them on, added, to cfg.Progress) and adds their final reports
// into one result. cfg.OnStart is called at the start, on this machine's
// clock. An agent that fails, stops heartbeating or loses its clients
// ends the step incomplete, the error naming it and what it last
// reported; the others are stopped. Like engine.Run it returns a result
// also with an error.
func (c *Coordinator) Step(ctx context.Context, cfg engine.Config) (*engine.Result, error) {
	c.step++
	c.last = nil
	plan := c.plan
	plan.Clients, plan.Shares, plan.Load = cfg.Clients, Split(cfg.Clients, c.cfg.Agents, cfg.Rate), cfg.Settings
	body, err := json.Marshal(plan)
	if err != nil {
		return nil, err
	}
	if _, err := c.conn.Exec(ctx, `INSERT INTO pgscale_agent_steps (run_id, step, plan, state) VALUES ($1, $2, $3, 'connecting')`,
		c.run, c.step, body); err != nil {
		return nil, fmt.Errorf("coordination database: write step %d: %w", c.step, err)
	}
	st := make([]*agentState, c.cfg.Agents)
	for i := range st {
		st[i] = &agentState{share: plan.Shares[i]}
	}
	fail := func(err error) (*engine.Result, error) {
		c.stopStep(ctx)
		r := engine.NewResult(cfg.Clients, cfg.Program, engine.IORaw)
		r.Incomplete = err.Error()
		if ctx.Err() != nil {
			r.Incomplete = "interrupted while the agents connected their clients"
		}
		return r, err
	}

	// The barrier: every agent connects its clients and says it is ready.
	deadline := time.Now().Add(c.cfg.JoinTimeout)
	for {
		if err := c.poll(ctx, st, false); err != nil {
			return fail(err)
		}
		if err := c.check(st); err != nil {
			return fail(err)
		}
		ready := 0
		for _, a := range st {
			if a.state == "ready" {
				ready++
			}
		}
		if ready == len(st) {
			break
		}
		if time.Now().After(deadline) {
			var late []string
			for i, a := range st {
				if a.state != "ready" {
					late = append(late, fmt.Sprintf("%d (%s)", i, orWord(a.note, a.state)))
				}
			}
			return fail(fmt.Errorf("agent %s did not connect its clients within %v", strings.Join(late, ", "), c.cfg.JoinTimeout))
		}
		if err := sleep(ctx, 25*time.Millisecond); err != nil {
			return fail(err)
		}
	}

	// The start, on the server's clock; this machine's clock for OnStart.
	own, err := EstimateOffset(ctx, OffsetSamples, time.Now, serverClock(c.conn))
	if err != nil {
		return fail(err)
	}
	var startAt time.Time
	err = c.conn.QueryRow(ctx, `UPDATE pgscale_agent_steps SET state = 'started', start_at = clock_timestamp() + make_interval(secs => $3)
		WHERE run_id = $1 AND step = $2 RETURNING start_at`, c.run, c.step, c.cfg.StartLead.Seconds()).Scan(&startAt)
	if err != nil {
		return fail(fmt.Errorf("coordination database: set the start: %w", err))
	}
	local := own.ToLocal(startAt)
	if err := sleep(ctx, time.Until(local)); err != nil {
		return fail(err)
	}
	if cfg.OnStart != nil {
		cfg.OnStart(local, local.Add(cfg.Warmup))
	}

	// The step: collect until every agent has sent its final report.
	var stepErr error
	emitted := 0 // intervals passed on as progress
	for {
		if err := c.poll(ctx, st, true); err != nil {
			stepErr = err
			break
		}
		c.progress(&cfg, st, &emitted)
		if err := c.check(st); err != nil {
			stepErr = err
			break
		}
		done := 0
		for _, a := range st {
			if a.final != nil {
				done++
			}
		}
		if done == len(st) {
			break
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			stepErr = err
			break
		}
	}
	if stepErr != nil {
		// The others stop, and send what they measured until then.
		c.stopStep(ctx)
		wait := time.Now().Add(min(c.cfg.LostAfter, 3*time.Second))
		for time.Now().Before(wait) {
			if c.poll(context.WithoutCancel(ctx), st, true) != nil || c.allFinal(st) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	r, err := c.outcome(cfg, st, startAt)
	if err != nil {
		return nil, err
	}
	if stepErr != nil {
		r.Incomplete = stepErr.Error()
		if ctx.Err() != nil {
			r.Incomplete, stepErr = "interrupted", ctx.Err()
		}
	}
	return r, stepErr
}

// allFinal reports whether every agent that is not lost has sent its final
// report.
func (c *Coordinator) allFinal(st []*agentState) bool {
	for _, a := range st {
		if a.final == nil && a.silent < c.cfg.LostAfter {
			return false
		}
	}
	return true
}

// stopStep tells every agent to stop the step.
func (c *Coordinator) stopStep(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = c.conn.Exec(ctx, `UPDATE pgscale_agent_steps SET state = 'stopped' WHERE run_id = $1 AND step = $2`, c.run, c.step)
}

// poll reads the members' states and, when collecting, the intervals and
// final reports that came since the last poll.
func (c *Coordinator) poll(ctx context.Context, st []*agentState, collecting bool) error {
	rows, err := c.conn.Query(ctx, `SELECT idx, step, state, note, extract(epoch FROM clock_timestamp() - heartbeat)::float8
		FROM pgscale_agent_members WHERE run_id = $1`, c.run)
	if err != nil {
		return fmt.Errorf("coordination database: %w", err)
	}
	for rows.Next() {
		var idx, step int
		var state, note string
		var silent float64
		if err := rows.Scan(&idx, &step, &state, &note, &silent); err != nil {
			return err
		}
		if idx < 0 || idx >= len(st) {
			continue
		}
		a := st[idx]
		a.silent = time.Duration(silent * float64(time.Second))
		a.note = note
		if step == c.step {
			a.state = state
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("coordination database: %w", err)
	}
	if !collecting {
		return nil
	}
	seen := make([]int32, len(st))
	for i, a := range st {
		seen[i] = int32(len(a.intervals))
	}
	rows, err = c.conn.Query(ctx, `SELECT idx, body FROM pgscale_agent_intervals
		WHERE run_id = $1 AND step = $2 AND seq >= ($3::int[])[idx + 1] ORDER BY idx, seq`, c.run, c.step, seen)
	if err != nil {
		return fmt.Errorf("coordination database: %w", err)
	}
	for rows.Next() {
		var idx int
		var ir IntervalReport
		if err := rows.Scan(&idx, &ir); err != nil {
			return err
		}
		if idx >= 0 && idx < len(st) && ir.Seq == len(st[idx].intervals) {
			st[idx].intervals = append(st[idx].intervals, ir)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("coordination database: %w", err)
	}
	have := []int32{} // not nil: NOT idx = ANY(NULL) is never true
	for i, a := range st {
		if a.final != nil {
			have = append(have, int32(i))
		}
	}
	rows, err = c.conn.Query(ctx, `SELECT idx, body FROM pgscale_agent_reports
		WHERE run_id = $1 AND step = $2 AND NOT idx = ANY($3::int[])`, c.run, c.step, have)
	if err != nil {
		return fmt.Errorf("coordination database: %w", err)
	}
	for rows.Next() {
		var idx int
		var f FinalReport
		if err := rows.Scan(&idx, &f); err != nil {
			return err
		}
		if idx >= 0 && idx < len(st) {
			st[idx].final = &f
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("coordination database: %w", err)
	}
	return nil
}

// check finds an agent that failed, lost its clients or stopped
// heartbeating, or a coordinator that can no longer heartbeat itself.
func (c *Coordinator) check(st []*agentState) error {
	c.hbMu.Lock()
	hbErr := c.hbErr
	c.hbMu.Unlock()
	if hbErr != nil {
		return fmt.Errorf("coordination database: heartbeat: %w", hbErr)
	}
	for i, a := range st {
		m := c.members[i]
		switch {
		case a.final != nil && a.final.Incomplete != "":
			return fmt.Errorf("agent %d (%s%s) could not complete the step: %s", i, m.Host, sourceNote(m.SourceAddress), a.final.Incomplete)
		case a.state == "failed":
			return fmt.Errorf("agent %d (%s%s) failed: %s", i, m.Host, sourceNote(m.SourceAddress), orWord(a.note, "no reason given"))
		case a.final == nil && a.silent > c.cfg.LostAfter:
			return fmt.Errorf("agent %d (%s%s) stopped heartbeating %.1f s ago; it last reported: %s", i, m.Host,
				sourceNote(m.SourceAddress), a.silent.Seconds(), lastReport(a))
		}
	}
	return nil
}

// lastReport says what an agent last reported in the step.
func lastReport(a *agentState) string {
	if len(a.intervals) == 0 {
		return orWord(a.note, a.state)
	}
	ir := a.intervals[len(a.intervals)-1]
	var n int64
	for _, x := range a.intervals {
		if !x.Warmup {
			n += x.Counts.Transactions
		}
	}
	return fmt.Sprintf("interval %d ending at %.1f s, %d clients, %d transactions counted", ir.Seq+1,
		(ir.Start + ir.Length).Seconds(), a.share.Clients, n)
}

func orWord(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// progress passes on, added, every interval that all the agents running
// clients have sent (or that the ones still running have, when others
// are done with fewer); next counts the intervals passed on.
func (c *Coordinator) progress(cfg *engine.Config, st []*agentState, next *int) {
	if cfg.Progress == nil {
		return
	}
	for {
		k := *next
		var parts []IntervalReport
		for _, a := range st {
			switch {
			case a.share.Clients == 0:
			case len(a.intervals) > k:
				parts = append(parts, a.intervals[k])
			case a.final == nil:
				return // not there yet
			}
		}
		if len(parts) == 0 {
			return
		}
		*next = k + 1
		sum := metrics.NewInterval(0, 0)
		var length time.Duration
		for _, p := range parts {
			length += p.Length
			if iv, err := interval(p.Counts, p.Histogram); err == nil {
				sum.Merge(iv)
			}
		}
		pt := engine.Point{Start: parts[0].Start, Length: length / time.Duration(len(parts)), Counts: sum.Counts, Latency: sum.Summarize()}
		cfg.Progress(engine.Progress{Clients: cfg.Clients, Elapsed: pt.Start + pt.Length + cfg.Warmup, Warmup: parts[0].Warmup, Point: pt})
	}
}

// outcome adds the agents' reports of the step into one result, and keeps
// each agent's part (Last).
func (c *Coordinator) outcome(cfg engine.Config, st []*agentState, startAt time.Time) (*engine.Result, error) {
	out := &Outcome{}
	var earliest time.Time
	for _, a := range st {
		if a.final != nil && !a.final.Started.IsZero() && (earliest.IsZero() || a.final.Started.Before(earliest)) {
			earliest = a.final.Started
		}
	}
	for i, a := range st {
		r, err := agentResult(cfg.Program, a.share, a.final, a.intervals)
		if err != nil {
			return nil, fmt.Errorf("agent %d: %w", i, err)
		}
		if a.final == nil {
			r.Incomplete = "the agent sent no final report: " + lastReport(a)
			if a.share.Clients > 0 {
				r.Began = startAt.Add(cfg.Warmup)
			}
		}
		out.Results = append(out.Results, r)
		m := c.members[i]
		sa := result.StepAgent{Index: i, Host: m.Host, SourceAddress: m.SourceAddress, FirstClient: a.share.First,
			Clients: a.share.Clients, Transactions: r.Total.Transactions, Complete: r.Incomplete == "", Reason: r.Incomplete}
		if el := r.Elapsed.Seconds(); el > 0 {
			sa.TPS = float64(r.Total.Transactions) / el
		}
		cpu := r.ClientUser + r.ClientSys
		sa.ClientCPU = result.CPU{UserS: r.ClientUser.Seconds(), SysS: r.ClientSys.Seconds()}
		if r.Total.Transactions > 0 {
			sa.ClientCPU.PerTxnUS = float64(cpu.Microseconds()) / float64(r.Total.Transactions)
		}
		if el := r.Elapsed.Seconds(); el > 0 && m.Environment.CPUs > 0 {
			sa.ClientCPU.Share = cpu.Seconds() / (el * float64(m.Environment.CPUs))
		}
		if f := a.final; f != nil && !f.Started.IsZero() {
			sa.Offset = result.Offset{Ms: ms(f.Offset), UncertaintyMs: ms(f.Uncertainty)}
			sa.StartLateMs = ms(f.Started.Sub(f.Planned))
			sa.StartSkewMs = ms(f.Started.Sub(earliest))
			if b := c.best[i]; b.Uncertainty < 0 || f.Uncertainty < b.Uncertainty {
				c.best[i] = Offset{Offset: f.Offset, Uncertainty: f.Uncertainty}
			}
		}
		c.txns[i] += r.Total.Transactions
		out.Agents = append(out.Agents, sa)
	}
	c.last = out
	c.cfg.Log(summaryLine(c.step, out.Agents))
	m := merge(cfg.Clients, cfg.Program, out.Results)
	if m.Began.IsZero() {
		m.Began = startAt.Add(cfg.Warmup)
	}
	return m, nil
}

// summaryLine says in one line how the agents shared a step: their
// transactions, how far apart they started and how well their clocks are
// known.
func summaryLine(step int, as []result.StepAgent) string {
	var parts []string
	var total int64
	skew, unc := 0.0, 0.0
	for _, a := range as {
		parts = append(parts, fmt.Sprint(a.Transactions))
		total += a.Transactions
		skew, unc = max(skew, a.StartSkewMs), max(unc, a.Offset.UncertaintyMs)
	}
	return fmt.Sprintf("step %d on %d agents: %d transactions (%s), started within %.3f ms, clock offsets known within ± %.3f ms",
		step, len(as), total, strings.Join(parts, " + "), skew, unc)
}
