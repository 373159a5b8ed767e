package agent

import (
	"fmt"
	"strconv"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/workload"
)

// Workload is what every agent's clients run, as the coordinator resolved
// it: the scripts' text (an agent has no script files), the seed, the
// scale read from the data.
type Workload struct {
	Scripts  []Script          `json:"scripts"`
	Defines  map[string]string `json:"defines,omitempty"`
	Protocol string            `json:"protocol"`
	Seed     uint64            `json:"seed"`
	Scale    int               `json:"scale"`
	// Threads is -j: clients are dealt to pgbench's threads for the
	// script choice. A thread whose clients two agents share draws that
	// choice twice, once in each.
	Threads int `json:"threads,omitempty"`
}

// Script is one weighted script of the workload.
type Script struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Weight int    `json:"weight"`
}

// StepPlan is one step as the coordinator hands it to the agents:
// everything an agent needs to run its share, and no password (an agent
// takes the target's password from its own environment: PGPASSWORD,
// .pgpass, a Kubernetes Secret).
type StepPlan struct {
	Clients  int      `json:"clients"` // over all agents
	Shares   []Share  `json:"shares"`  // by agent index
	Target   string   `json:"target"`  // connection string, without password
	Workload Workload `json:"workload"`
	// Load is how the step's load runs, as the coordinator's engine
	// would run it (its Rate the whole step's: each share has its own).
	Load load.Settings `json:"load"`
}

// program builds the step's program as the coordinator does: for all of
// the step's clients, whichever share this agent runs.
func (p *StepPlan) program() (*script.Program, error) {
	w := p.Workload
	spec := workload.Spec{Defines: w.Defines, Protocol: w.Protocol, Seed: strconv.FormatUint(w.Seed, 10)}
	for _, s := range w.Scripts {
		spec.Scripts = append(spec.Scripts, workload.ScriptArg{Kind: "sql", Arg: s.Name, Source: s.Source, Weight: s.Weight})
	}
	wl, err := workload.Load(spec)
	if err != nil {
		return nil, fmt.Errorf("the coordinator's workload: %w", err)
	}
	return script.NewProgram(wl.Scripts, script.Options{Scale: w.Scale, RandomSeed: w.Seed, Defines: w.Defines,
		Clients: p.Clients, Threads: w.Threads})
}

// engineConfig is the engine's settings for share s of the step.
func (p *StepPlan) engineConfig(s Share) (engine.Config, error) {
	proto, err := engine.ParseProtocol(p.Workload.Protocol)
	if err != nil {
		return engine.Config{}, err
	}
	cfg := engine.Config{Settings: p.Load, Clients: s.Clients, FirstClient: s.First, Protocol: proto, Seed: p.Workload.Seed}
	cfg.Rate = s.Rate
	return cfg, nil
}

// IntervalReport is one interval an agent measured, as it ended: counts and
// an HDR histogram (not percentiles), which add exactly.
type IntervalReport struct {
	Seq       int            `json:"seq"`
	Warmup    bool           `json:"warmup,omitempty"`
	Start     time.Duration  `json:"start"` // since the measured window began
	Length    time.Duration  `json:"length"`
	Counts    metrics.Counts `json:"counts"`
	Histogram string         `json:"hist,omitempty"` // measured intervals only
}

// FinalReport is what an agent measured in a step, once its clients have
// stopped.
type FinalReport struct {
	Counts    metrics.Counts        `json:"counts"`
	Histogram string                `json:"hist"`
	Scripts   []metrics.ScriptStat  `json:"scripts,omitempty"`
	Commands  []metrics.CommandStat `json:"commands,omitempty"`
	IO        string                `json:"io"`
	Colocated int                   `json:"colocated,omitempty"`
	// Began is when its measured window began, Started when its clients
	// really started (after the barrier), both on the database server's
	// clock; Planned is the start the coordinator set.
	Began          time.Time     `json:"began"`
	Started        time.Time     `json:"started"`
	Planned        time.Time     `json:"planned"`
	Elapsed        time.Duration `json:"elapsed"`
	ClientUser     time.Duration `json:"client_user"`
	ClientSys      time.Duration `json:"client_sys"`
	ConnectMean    time.Duration `json:"connect_mean"`
	ConnectElapsed time.Duration `json:"connect_elapsed"`
	Errors         []ErrorCount  `json:"errors,omitempty"`
	Aborted        int           `json:"aborted,omitempty"`
	Incomplete     string        `json:"incomplete,omitempty"`
	Offset         time.Duration `json:"offset"`
	Uncertainty    time.Duration `json:"uncertainty"`
}

// ErrorCount is one distinct client error and how often it was seen.
type ErrorCount struct {
	Kind  metrics.FailKind `json:"kind"`
	Msg   string           `json:"msg"`
	Count int64            `json:"count"`
}

// finalOf is the final report of what the engine measured, its instants
// on the server's clock.
func finalOf(r *engine.Result, off Offset, started, planned time.Time) FinalReport {
	f := FinalReport{Counts: r.Total.Counts, Scripts: r.Total.Scripts, Commands: r.Total.Commands, IO: r.IO.String(),
		Colocated: r.Colocated, Elapsed: r.Elapsed, ClientUser: r.ClientUser, ClientSys: r.ClientSys,
		ConnectMean: r.ConnectMean, ConnectElapsed: r.ConnectElapsed, Aborted: r.Aborted, Incomplete: r.Incomplete,
		Offset: off.Offset, Uncertainty: off.Uncertainty, Planned: planned}
	if !r.Began.IsZero() {
		f.Began = off.ToServer(r.Began)
	}
	if !started.IsZero() {
		f.Started = off.ToServer(started)
	}
	f.Histogram, _ = metrics.EncodeHistogram(r.Total.Latency)
	for _, e := range r.Errors {
		f.Errors = append(f.Errors, ErrorCount{Kind: e.Kind, Msg: e.Msg, Count: e.Count})
	}
	return f
}
