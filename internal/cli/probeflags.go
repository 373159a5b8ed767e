package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probe"
)

// probeFlags choose the server-side probes that watch each step.
type probeFlags struct {
	none         bool
	noProcess    bool
	noCounters   bool
	noWaits      bool
	noLocks      bool
	noStatements bool
	profile      bool
	profileDir   string
	waitSource   string
	waitHz       float64
	locks        int
	poolerPID    int

	fs  *pflag.FlagSet
	set *probe.Set
}

func (p *probeFlags) register(fs *pflag.FlagSet) {
	p.fs = fs
	fs.BoolVar(&p.none, "no-probes", false, "run no server-side probe (and so no bottleneck verdict)")
	fs.BoolVar(&p.noProcess, "no-process-probe", false, "no process accounting (CPU, run-queue wait, context switches from /proc)")
	fs.BoolVar(&p.noCounters, "no-counters", false, "no hardware counters (cycles, instructions)")
	fs.BoolVar(&p.noWaits, "no-waits", false, "no wait-event sampling")
	fs.BoolVar(&p.noLocks, "no-locks", false, "no pg_locks snapshots")
	fs.BoolVar(&p.noStatements, "no-statements", false, "no pg_stat_statements differences")
	fs.BoolVar(&p.profile, "profile", false, "record a CPU profile of the server with perf for each step (pprof files)")
	fs.StringVar(&p.profileDir, "profile-dir", "", "where --profile writes its pprof files (default results/profile-<UTC time>)")
	fs.StringVar(&p.waitSource, "wait-source", probe.WaitSourceAuto, "wait events from pg_wait_sampling, pg_stat_activity, or auto (the first when installed)")
	fs.Float64Var(&p.waitHz, "wait-hz", 20, "pg_stat_activity samples per second when that is the wait-event source")
	fs.IntVar(&p.locks, "lock-snapshots", 4, "pg_locks snapshots per step")
	fs.IntVar(&p.poolerPID, "pooler-pid", 0, "pid of a pooler on this host to account apart from server and client")
}

func (p *probeFlags) validate() error {
	switch {
	case p.waitSource != probe.WaitSourceAuto && p.waitSource != probe.WaitSourceWaitSampling && p.waitSource != probe.WaitSourceStatActivity:
		return Usagef("--wait-source %q: want auto, pg_wait_sampling or pg_stat_activity", p.waitSource)
	case p.waitHz <= 0 || p.waitHz > 1000:
		return Usagef("--wait-hz must be between 0 and 1000")
	case p.locks < 1:
		return Usagef("--lock-snapshots must be at least 1")
	case p.none && p.profile:
		return Usagef("--profile is a probe: it cannot go with --no-probes")
	}
	return nil
}

// observers returns the probes to run beside each step on tgt.
func (p *probeFlags) observers(tgt *openTarget) ([]observe.Watcher, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if p.none {
		return nil, nil
	}
	cfg := probe.DefaultConfig()
	cfg.Conn = tgt.Config
	if tgt.Cluster != nil {
		cfg.ServerPIDFunc, cfg.Ephemeral = tgt.Cluster.PID, true
	}
	cfg.PoolerPID = p.poolerPID
	if f := p.fs.Lookup("connect"); f != nil {
		cfg.ConnectPerTransaction = f.Value.String() == "true"
	}
	cfg.Process, cfg.Counters, cfg.Waits = !p.noProcess, !p.noCounters, !p.noWaits
	cfg.Locks, cfg.Statements, cfg.Profile = !p.noLocks, !p.noStatements, p.profile
	cfg.WaitSource, cfg.WaitHz, cfg.LockSnapshots = p.waitSource, p.waitHz, p.locks
	cfg.ProfileDir = p.profileDir
	if cfg.Profile && cfg.ProfileDir == "" {
		cfg.ProfileDir = filepath.Join("results", "profile-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	cfg.Log = func(s string) { fmt.Fprintln(tgt.log, s) }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set, err := probe.New(ctx, cfg)
	if err != nil {
		return nil, &IncompleteError{Err: fmt.Errorf("probes: %w", err)}
	}
	p.set = set
	return []observe.Watcher{set}, nil
}

// close releases the probes' connections.
func (p *probeFlags) close() {
	if p.set != nil {
		p.set.Close()
	}
}
