package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgscale/pgscale/internal/result"
)

// Defaults of a coordinated run.
const (
	DefaultJob         = "pgscale"
	DefaultJoinTimeout = 60 * time.Second
	DefaultLostAfter   = 5 * time.Second
	DefaultStartLead   = 500 * time.Millisecond
)

// heartbeatEvery is how often the coordinator and the agents say they are
// alive; an agent or coordinator silent for LostAfter is lost.
const heartbeatEvery = 250 * time.Millisecond

// Config is how a coordinator runs its agents.
type Config struct {
	// DSN is the coordination database. It may hold a password: it is
	// used to connect, and never stored or printed.
	DSN string
	// Job names the run for its agents, which join the newest open run of
	// their job (default DefaultJob): several coordinators can share a
	// database.
	Job    string
	Agents int
	// JoinTimeout bounds the wait for every agent to join the run, and
	// then, in each step, for every agent to connect its clients.
	JoinTimeout time.Duration
	// LostAfter is how long an agent (or the coordinator, for the
	// agents) may go without a heartbeat before it is lost.
	LostAfter time.Duration
	// StartLead is how far ahead of the moment it is set a step's start
	// is put, so that every agent learns it before it comes.
	StartLead time.Duration
	// Log receives one-line notices.
	Log func(string)
}

func (c *Config) defaults() error {
	if c.Agents < 1 {
		return atLeastOne(c.Agents)
	}
	if c.DSN == "" {
		return notGiven("DSN", "the PostgreSQL database that holds the barrier and the agents' data")
	}
	if c.Job == "" {
		c.Job = DefaultJob
	}
	if c.JoinTimeout <= 0 {
		c.JoinTimeout = DefaultJoinTimeout
	}
	if c.LostAfter <= 0 {
		c.LostAfter = DefaultLostAfter
	}
	if c.StartLead <= 0 {
		c.StartLead = DefaultStartLead
	}
	if c.Log == nil {
		c.Log = func(string) {}
	}
	return nil
}

// Member is an agent that joined the run.
type Member struct {
	Index         int
	Host          string
	SourceAddress string
	PID           int
	Environment   result.Environment
}

// Coordinator runs a run's steps on its agents. Its methods are called
// from one goroutine, in order: Open, Prepare, Gather, Step per step,
// Close.
type Coordinator struct {
	cfg      Config
	conn     *pgx.Conn
	where    string // the coordination database, described
	run      int64
	deadline time.Time // for the agents to join
	members  []Member
	plan     StepPlan
	step     int
	last     *Outcome
	best     []Offset // each agent's most certain offset of the run
	txns     []int64  // each agent's transactions over the run

	hbStop chan struct{}
	hbDone chan struct{}
	hbMu   sync.Mutex
	hbErr  error
}

// Open connects to the coordination database, migrates its schema and
// opens a run there for cfg.Agents agents to join. The caller must Close
// it.
func Open(ctx context.Context, cfg Config) (*Coordinator, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	conn, where, err := connect(ctx, "DSN", cfg.DSN, "pgscale coordinator")
	if err != nil {
		return nil, err
	}
	c := &Coordinator{cfg: cfg, conn: conn, where: where, deadline: time.Now().Add(cfg.JoinTimeout),
		best: make([]Offset, cfg.Agents), txns: make([]int64, cfg.Agents)}
	for i := range c.best {
		c.best[i].Uncertainty = -1
	}
	if err := migrateSchema(ctx, conn); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("coordination database %s: %w", where, err)
	}
	err = conn.QueryRow(ctx, `INSERT INTO pgscale_agent_runs (job, agents, state, lost_after_ms, coordinator)
		VALUES ($1, $2, 'open', $3, $4) RETURNING id`, cfg.Job, cfg.Agents, cfg.LostAfter.Milliseconds(), hostname()).Scan(&c.run)
	if err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("coordination database %s: open a run: %w", where, err)
	}
	hb, _, err := connect(ctx, "DSN", cfg.DSN, "pgscale coordinator heartbeat")
	if err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	c.hbStop, c.hbDone = make(chan struct{}), make(chan struct{})
	go c.heartbeat(hb)
	cfg.Log(fmt.Sprintf("coordination: run %d of job %q on %s waits for %d agents", c.run, cfg.Job, where, cfg.Agents))
	return c, nil
}

// heartbeat says the coordinator is alive until Close.
func (c *Coordinator) heartbeat(conn *pgx.Conn) {
	defer close(c.hbDone)
	defer conn.Close(context.Background())
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-c.hbStop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.LostAfter)
		_, err := conn.Exec(ctx, `UPDATE pgscale_agent_runs SET heartbeat = clock_timestamp() WHERE id = $1`, c.run)
		cancel()
		c.hbMu.Lock()
		c.hbErr = err
		c.hbMu.Unlock()
	}
}

// Run is the run's number in the coordination database.
func (c *Coordinator) Run() int64 { return c.run }

// Coordination is what the result file says of the coordination.
func (c *Coordinator) Coordination() *result.Coordination {
	return &result.Coordination{Database: c.where, Job: c.cfg.Job, Run: c.run, StartLeadMs: ms(c.cfg.StartLead)}
}

// Prepare sets what the next steps run: the workload and the target's
// connection string as the agents reach it (without password). A run
// prepares once; a suite before each cell.
func (c *Coordinator) Prepare(w Workload, targetDSN string) {
	c.plan.Workload, c.plan.Target = w, targetDSN
}

// Retarget sets the target of the next steps, the workload unchanged: an
// A/B run's turns go to its targets in turn.
func (c *Coordinator) Retarget(targetDSN string) { c.plan.Target = targetDSN }

// Gather waits until every agent has joined the run, or fails once
// JoinTimeout has passed since Open, naming the agents missing; then the
// run is measuring and no agent can join it any more. Once they have
// joined it returns at once: a suite gathers them before every cell.
func (c *Coordinator) Gather(ctx context.Context) error {
	if c.members != nil {
		return nil
	}
	for {
		ms, err := c.readMembers(ctx)
		if err != nil {
			return err
		}
		if len(ms) == c.cfg.Agents {
			c.members = ms
			break
		}
		if time.Now().After(c.deadline) {
			var missing []string
			have := map[int]bool{}
			for _, m := range ms {
				have[m.Index] = true
			}
			for i := range c.cfg.Agents {
				if !have[i] {
					missing = append(missing, fmt.Sprint(i))
				}
			}
			return fmt.Errorf("agent %s did not join run %d (job %q on %s) within %v: %d of %d agents joined",
				strings.Join(missing, ", "), c.run, c.cfg.Job, c.where, c.cfg.JoinTimeout, len(ms), c.cfg.Agents)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	if _, err := c.conn.Exec(ctx, `UPDATE pgscale_agent_runs SET state = 'measuring' WHERE id = $1`, c.run); err != nil {
		return fmt.Errorf("coordination database: %w", err)
	}
	for _, m := range c.members {
		c.cfg.Log(fmt.Sprintf("agent %d: %s%s, pid %d", m.Index, m.Host, sourceNote(m.SourceAddress), m.PID))
	}
	return nil
}

func sourceNote(addr string) string {
	if addr == "" {
		return ""
	}
	return " from " + addr
}

// Members are the agents of the run, by index, once Gather has returned.
func (c *Coordinator) Members() []Member { return c.members }

func (c *Coordinator) readMembers(ctx context.Context) ([]Member, error) {
	rows, err := c.conn.Query(ctx, `SELECT idx, host, source_address, pid, environment FROM pgscale_agent_members
		WHERE run_id = $1 ORDER BY idx`, c.run)
	if err != nil {
		return nil, fmt.Errorf("coordination database: %w", err)
	}
	var out []Member
	for rows.Next() {
		var m Member
		var env []byte
		if err := rows.Scan(&m.Index, &m.Host, &m.SourceAddress, &m.PID, &env); err != nil {
			return nil, err
		}
		_ = json.Unmarshal(env, &m.Environment)
		out = append(out, m)
	}
	return out, rows.Err()
}

// Close ends the run in the coordination database: done when runErr is
// nil, else failed (or cancelled, when ctx was) with its reason, which
// stops every agent still waiting or running.
func (c *Coordinator) Close(ctx context.Context, runErr error) error {
	if c.hbStop != nil {
		close(c.hbStop)
		<-c.hbDone
		c.hbStop = nil
	}
	state, reason := "done", ""
	if runErr != nil {
		state, reason = "failed", runErr.Error()
		if ctx.Err() != nil || errors.Is(runErr, context.Canceled) {
			state, reason = "cancelled", "interrupted"
		}
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, err := c.conn.Exec(cctx, `UPDATE pgscale_agent_runs SET state = $2, reason = $3 WHERE id = $1`, c.run, state, reason)
	c.conn.Close(cctx)
	if err != nil {
		return fmt.Errorf("coordination database: end run %d: %w", c.run, err)
	}
	return nil
}

// sleep waits d unless ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// hostname names this machine in the coordination database.
func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
}
