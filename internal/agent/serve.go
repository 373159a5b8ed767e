package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// EnvIndex is the variable Kubernetes sets to a pod's index in an Indexed
// Job; an agent takes its index from it unless told otherwise.
const EnvIndex = "JOB_COMPLETION_INDEX"

// EnvCoordinator is the variable an agent takes the coordination
// database's connection string from unless told otherwise: in a pod it
// comes from a Secret.
const EnvCoordinator = "PGSCALE_COORDINATOR"

// DefaultWait is how long an agent waits for a run to join.
const DefaultWait = 10 * time.Minute

// AgentConfig is one agent.
type AgentConfig struct {
	// Coordinator is the coordination database (it may hold a password:
	// it is used to connect, and never stored or printed).
	Coordinator string
	Index       int
	// Job is the job whose newest open run the agent joins (default
	// DefaultJob).
	Job string
	// SourceAddr, when set, is the local address its clients bind when
	// they connect over TCP.
	SourceAddr net.IP
	// Wait bounds the wait for an open run to join (default DefaultWait).
	Wait time.Duration
	// Log receives one-line notices (steps, the clients' aborts).
	Log func(string)
}

// ErrRunFailed is returned (wrapped) when the coordinator ended the run
// as failed or cancelled, or stopped heartbeating.
var ErrRunFailed = errors.New("the run failed")

// Serve is one agent from start to end: it waits for an open run of its
// job, joins it under its index (an index already taken, a restarted pod,
// cannot join), and runs its share of every step the coordinator plans
// until the run ends. It returns nil when the run completed, and an error
// when it failed, was cancelled, or the coordinator was lost; when ctx
// ends it stops at once.
func Serve(ctx context.Context, cfg AgentConfig) error {
	if cfg.Index < 0 {
		return usage.Errorf("agent index must be at least 0, got %d", cfg.Index)
	}
	if cfg.Coordinator == "" {
		return notGiven("Coordinator", "the PostgreSQL database that holds the run's plan and barrier")
	}
	if cfg.Job == "" {
		cfg.Job = DefaultJob
	}
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultWait
	}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	conn, where, err := connect(ctx, "Coordinator", cfg.Coordinator, fmt.Sprintf("pgscale agent %d", cfg.Index))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := migrateSchema(ctx, conn); err != nil {
		return fmt.Errorf("coordination database %s: %w", where, err)
	}
	a := &agent{cfg: cfg, conn: conn, where: where, cur: -1, state: "joined"}
	if err := a.join(ctx); err != nil {
		return err
	}
	cfg.Log(fmt.Sprintf("agent %d joined run %d (job %q on %s)", cfg.Index, a.run, cfg.Job, where))
	return a.loop(ctx)
}

// agent is an agent in a run: its connection to the coordination database
// (used by loop's goroutine alone) and the step it is running.
type agent struct {
	cfg       AgentConfig
	conn      *pgx.Conn
	where     string
	run       int64
	lostAfter time.Duration

	cur         int    // the step it is in; -1 before the first
	state, note string // its member row's, written with every heartbeat
	sr          *stepRun
}

// join waits for the newest open run of the job and joins it.
func (a *agent) join(ctx context.Context) error {
	deadline := time.Now().Add(a.cfg.Wait)
	env, _ := json.Marshal(result.CollectEnvironment())
	src := ""
	if a.cfg.SourceAddr != nil {
		src = a.cfg.SourceAddr.String()
	}
	for {
		var run int64
		var agents, lostMs int
		var state string
		err := a.conn.QueryRow(ctx, `SELECT id, agents, state, lost_after_ms FROM pgscale_agent_runs
			WHERE job = $1 AND state IN ('open', 'measuring') AND heartbeat > clock_timestamp() - make_interval(secs => lost_after_ms / 1000.0)
			ORDER BY id DESC LIMIT 1`, a.cfg.Job).Scan(&run, &agents, &state, &lostMs)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("coordination database: %w", err)
		case a.cfg.Index >= agents:
			return usage.Errorf("agent index %d is out of range: run %d (job %q) has %d agents, indexes 0 to %d", a.cfg.Index, run, a.cfg.Job, agents, agents-1)
		case state == "measuring":
			return fmt.Errorf("run %d (job %q) is already measuring: an agent that was restarted cannot join a measurement in progress", run, a.cfg.Job)
		default:
			var joined bool
			err := pgx.BeginFunc(ctx, a.conn, func(tx pgx.Tx) error {
				var st string
				if err := tx.QueryRow(ctx, `SELECT state FROM pgscale_agent_runs WHERE id = $1 FOR SHARE`, run).Scan(&st); err != nil {
					return err
				}
				if st != "open" {
					return nil
				}
				tag, err := tx.Exec(ctx, `INSERT INTO pgscale_agent_members (run_id, idx, host, source_address, pid, environment)
					VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, run, a.cfg.Index, hostname(), src, os.Getpid(), env)
				joined = err == nil && tag.RowsAffected() == 1
				return err
			})
			if err != nil {
				return fmt.Errorf("coordination database: join run %d: %w", run, err)
			}
			if !joined {
				var host string
				var pid int
				if a.conn.QueryRow(ctx, `SELECT host, pid FROM pgscale_agent_members WHERE run_id = $1 AND idx = $2`, run, a.cfg.Index).Scan(&host, &pid) == nil {
					return fmt.Errorf("agent %d already joined run %d (job %q) from %s, pid %d: an agent that was restarted cannot join a run in progress",
						a.cfg.Index, run, a.cfg.Job, host, pid)
				}
				continue // the run started measuring meanwhile: the next look says so
			}
			a.run, a.lostAfter = run, time.Duration(lostMs)*time.Millisecond
			return nil
		}
		if time.Now().After(deadline) {
			return &NoRunError{Job: a.cfg.Job, Where: a.where, Wait: a.cfg.Wait}
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// stepRun is a step an agent runs: the engine's goroutine and what it
// tells the agent's loop.
type stepRun struct {
	n      int
	plan   StepPlan
	share  Share
	cancel context.CancelFunc

	ready chan struct{}  // the engine's clients are connected (Barrier)
	start chan time.Time // the start, on this machine's clock (to Barrier)
	done  chan stepDone  // the engine returned

	mu        sync.Mutex
	intervals []IntervalReport // not yet sent
	seq       int

	atBarrier bool      // ready was received and the offset estimated
	told      bool      // the start was passed to the engine
	off       Offset    // at the barrier
	planned   time.Time // the start, on the server's clock
	started   time.Time // when the clients really started (set before Barrier returns)
	stopped   bool
	txns      int64 // counted so far
}

// spinFor is how long before the start an agent stops sleeping and
// watches the clock.
const spinFor = 2 * time.Millisecond

type stepDone struct {
	res *engine.Result
	err error
}

// loop heartbeats, follows the run and its steps, runs the agent's share of
// each, and sends what it measured, until the run ends.
func (a *agent) loop(ctx context.Context) error {
	defer func() {
		if a.sr != nil {
			a.sr.cancel()
			<-a.sr.done
		}
	}()
	for {
		tick := 200 * time.Millisecond
		if sr := a.sr; sr != nil && !sr.told {
			tick = 20 * time.Millisecond // at the barrier: learn the start in time
		}
		if err := a.once(ctx); err != nil {
			return err
		}
		if a.state == "finished" {
			return nil
		}
		if err := sleep(ctx, tick); err != nil {
			a.stopped(ctx, "interrupted")
			return err
		}
	}
}

// stopped records, as well as it can, that the agent stopped.
func (a *agent) stopped(ctx context.Context, why string) {
	if a.sr != nil {
		a.sr.cancel()
		d := <-a.sr.done
		a.finish(context.WithoutCancel(ctx), d)
	}
	a.state, a.note = "failed", why
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_, _ = a.conn.Exec(cctx, `UPDATE pgscale_agent_members SET state = $3, note = $4, step = $5 WHERE run_id = $1 AND idx = $2`,
		a.run, a.cfg.Index, a.state, a.note, a.cur)
}

// once is one turn of the loop.
func (a *agent) once(ctx context.Context) error {
	sr := a.sr
	if sr != nil {
		select {
		case <-sr.ready:
			if err := a.barrier(ctx); err != nil {
				return err
			}
		case d := <-sr.done:
			if err := a.finish(ctx, d); err != nil {
				return err
			}
			sr = nil
		default:
		}
		if sr != nil {
			if err := a.send(ctx); err != nil {
				return err
			}
		}
	}
	var runState, reason string
	var coordSilent float64
	var step *int
	var stepState *string
	var startAt *time.Time
	var planBody []byte
	err := a.conn.QueryRow(ctx, `WITH hb AS (
			UPDATE pgscale_agent_members SET heartbeat = clock_timestamp(), step = $3, state = $4, note = $5
			WHERE run_id = $1 AND idx = $2)
		SELECT r.state, r.reason, extract(epoch FROM clock_timestamp() - r.heartbeat)::float8, s.step, s.state, s.start_at,
			CASE WHEN s.step > $3 THEN s.plan END
		FROM pgscale_agent_runs r LEFT JOIN LATERAL (
			SELECT step, state, start_at, plan FROM pgscale_agent_steps WHERE run_id = r.id ORDER BY step DESC LIMIT 1) s ON true
		WHERE r.id = $1`, a.run, a.cfg.Index, a.cur, a.state, a.note).Scan(&runState, &reason, &coordSilent, &step, &stepState, &startAt, &planBody)
	if err != nil {
		if ctx.Err() != nil {
			a.stopped(ctx, "interrupted")
			return ctx.Err()
		}
		a.stopped(ctx, "lost the coordination database")
		return fmt.Errorf("coordination database: %w", err)
	}
	switch {
	case runState == "done":
		if a.sr == nil {
			a.state = "finished"
			return nil
		}
	case runState == "failed" || runState == "cancelled":
		a.stopped(ctx, "stopped by the coordinator")
		return fmt.Errorf("%w: the coordinator ended run %d: %s", ErrRunFailed, a.run, orWord(reason, runState))
	case time.Duration(coordSilent*float64(time.Second)) > a.lostAfter:
		a.stopped(ctx, "lost the coordinator")
		return fmt.Errorf("%w: the coordinator of run %d stopped heartbeating %.1f s ago", ErrRunFailed, a.run, coordSilent)
	}
	if step == nil {
		return nil
	}
	if a.sr != nil && *step == a.sr.n {
		switch {
		case *stepState == "stopped" && !a.sr.stopped:
			a.sr.stopped = true
			a.sr.cancel()
		case startAt != nil && a.sr.atBarrier && !a.sr.told:
			a.sr.told = true
			a.sr.planned = *startAt
			a.state = "running"
			a.sr.start <- a.sr.off.ToLocal(*startAt)
		}
		return nil
	}
	if *step > a.cur && planBody != nil && a.sr == nil {
		return a.begin(ctx, *step, planBody)
	}
	return nil
}

// begin starts the agent's share of a new step: the engine connects its
// clients in a goroutine of its own and waits at the barrier.
func (a *agent) begin(ctx context.Context, n int, body []byte) error {
	var plan StepPlan
	if err := json.Unmarshal(body, &plan); err != nil {
		return fmt.Errorf("step %d: read its plan: %w", n, err)
	}
	if a.cfg.Index >= len(plan.Shares) {
		return fmt.Errorf("step %d plans %d agents, not agent %d", n, len(plan.Shares), a.cfg.Index)
	}
	a.cur = n
	share := plan.Shares[a.cfg.Index]
	sctx, cancel := context.WithCancel(ctx)
	sr := &stepRun{n: n, plan: plan, share: share, cancel: cancel, ready: make(chan struct{}, 1), start: make(chan time.Time, 1),
		done: make(chan stepDone, 1)}
	a.sr = sr
	a.state, a.note = "connecting", fmt.Sprintf("step %d: connecting %d clients", n, share.Clients)
	a.cfg.Log(fmt.Sprintf("step %d: clients %d to %d of %d", n, share.First, share.First+share.Clients-1, plan.Clients))
	if share.Clients == 0 {
		sr.ready <- struct{}{}
		go func() {
			// No clients in this step: only the barrier, and an empty report.
			select {
			case st := <-sr.start:
				sr.started = st
			case <-sctx.Done():
			}
			sr.done <- stepDone{}
		}()
		return nil
	}
	prog, err := plan.program()
	if err != nil {
		a.sr = nil
		cancel()
		return err
	}
	cfg, err := plan.engineConfig(share)
	if err != nil {
		a.sr = nil
		cancel()
		return err
	}
	conn, err := target.ParseDSN(plan.Target)
	if err != nil {
		a.sr = nil
		cancel()
		return err
	}
	cfg.Conn, cfg.Program, cfg.SourceAddr = conn, prog, a.cfg.SourceAddr
	cfg.Events = a.cfg.Log
	cfg.Progress = func(p engine.Progress) {
		sr.mu.Lock()
		sr.intervals = append(sr.intervals, IntervalReport{Seq: sr.seq, Warmup: p.Warmup, Start: p.Start, Length: p.Length,
			Counts: p.Counts, Histogram: p.Histogram})
		sr.seq++
		sr.mu.Unlock()
	}
	cfg.Barrier = func(ctx context.Context) (time.Time, error) {
		select {
		case sr.ready <- struct{}{}:
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
		select {
		case st := <-sr.start:
			if err := sleep(ctx, time.Until(st)-spinFor); err != nil {
				return time.Time{}, err
			}
			for time.Now().Before(st) {
				// The last moment spins: a timer wakes up to a millisecond
				// late here, and the agents' starts would differ by that.
			}
			sr.started = time.Now()
			return st, nil
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
	go func() {
		r, err := engine.Run(sctx, cfg)
		sr.done <- stepDone{res: r, err: err}
	}()
	return nil
}

// barrier is the engine's clients connected: the agent estimates its
// clock's offset to the server's and says it is ready.
func (a *agent) barrier(ctx context.Context) error {
	sr := a.sr
	off, err := EstimateOffset(ctx, OffsetSamples, time.Now, serverClock(a.conn))
	if err != nil {
		a.stopped(ctx, err.Error())
		return err
	}
	sr.off, sr.atBarrier = off, true
	a.state = "ready"
	a.note = fmt.Sprintf("step %d: %d clients connected, clock offset %.3f ± %.3f ms", sr.n, sr.share.Clients, ms(off.Offset), ms(off.Uncertainty))
	_, err = a.conn.Exec(ctx, `UPDATE pgscale_agent_members SET heartbeat = clock_timestamp(), step = $3, state = $4, note = $5
		WHERE run_id = $1 AND idx = $2`, a.run, a.cfg.Index, a.cur, a.state, a.note)
	if err != nil {
		return fmt.Errorf("coordination database: %w", err)
	}
	return nil
}

// send writes the intervals the engine ended since the last send.
func (a *agent) send(ctx context.Context) error {
	sr := a.sr
	sr.mu.Lock()
	ivs := sr.intervals
	sr.intervals = nil
	sr.mu.Unlock()
	if len(ivs) == 0 {
		return nil
	}
	batch := &pgx.Batch{}
	for _, iv := range ivs {
		body, err := json.Marshal(iv)
		if err != nil {
			return err
		}
		batch.Queue(`INSERT INTO pgscale_agent_intervals (run_id, step, idx, seq, body) VALUES ($1, $2, $3, $4, $5)`,
			a.run, sr.n, a.cfg.Index, iv.Seq, body)
		if !iv.Warmup {
			sr.txns += iv.Counts.Transactions
		}
	}
	last := ivs[len(ivs)-1]
	a.note = fmt.Sprintf("step %d: interval %d ending at %.1f s, %d clients, %d transactions counted", sr.n, last.Seq+1,
		(last.Start + last.Length).Seconds(), sr.share.Clients, sr.txns)
	if err := a.conn.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("coordination database: send intervals: %w", err)
	}
	return nil
}

// finish sends the step's last intervals and the final report.
func (a *agent) finish(ctx context.Context, d stepDone) error {
	sr := a.sr
	sr.cancel()
	err := a.send(ctx)
	a.sr = nil
	if err != nil {
		return err
	}
	var f FinalReport
	if d.res != nil {
		f = finalOf(d.res, sr.off, sr.started, sr.planned)
		if d.err != nil && f.Incomplete == "" {
			f.Incomplete = d.err.Error()
		}
	} else {
		// No clients in this step: nothing measured, no start to compare.
		f = FinalReport{Planned: sr.planned, Offset: sr.off.Offset, Uncertainty: sr.off.Uncertainty, IO: "raw"}
		if d.err != nil {
			f.Incomplete = d.err.Error()
		}
	}
	if sr.stopped && f.Incomplete == "interrupted" {
		f.Incomplete = "stopped by the coordinator"
	}
	body, err := json.Marshal(f)
	if err != nil {
		return err
	}
	a.state, a.note = "done", fmt.Sprintf("step %d: done, %d transactions", sr.n, f.Counts.Transactions)
	if f.Incomplete != "" {
		a.state, a.note = "failed", fmt.Sprintf("step %d: %s", sr.n, f.Incomplete)
	}
	a.cfg.Log(a.note)
	_, err = a.conn.Exec(ctx, `INSERT INTO pgscale_agent_reports (run_id, step, idx, body) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
		a.run, sr.n, a.cfg.Index, body)
	if err != nil {
		return fmt.Errorf("coordination database: send the step's report: %w", err)
	}
	return nil
}
