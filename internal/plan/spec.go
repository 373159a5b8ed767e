// Package plan runs experiments: Run, a sweep of client counts over one
// target, and RunAB, interleaved rounds over several targets. Each runner
// owns the whole pipeline from opening the targets to writing the result
// files, returns what it measured complete or not, and reports progress as
// events to an observe.Observer, printing nothing itself.
package plan

import (
	"github.com/pgscale/pgscale/internal/stats"
	"io"
	"net"
	"os"
	"time"

	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// Common is what every runner takes: the workload, its data, how the load
// runs, what watches each step, and where events go.
type Common struct {
	// Argv is the command line, recorded (passwords redacted) in every
	// result file; Version is pgscale's.
	Argv    []string
	Version string
	// Cluster shapes the ephemeral clusters the run starts.
	Cluster  target.ClusterOptions
	Workload workload.Spec
	Data     Data
	Load     Load
	// Probes choose the server-side probes (nil: the defaults).
	Probes *probeopt.Options
	// Disturb schedules disturbances in every step.
	Disturb disturb.Request
	// Observer receives the run's events (nil: none).
	Observer observe.Observer
	// Expect are decision rules on the sweep as written (run --expect,
	// compare.ParseExpectation), recorded in the result file; the caller
	// checks them (compare.Check).
	Expect []string
	// Transactions, when set, receives every transaction as it ends
	// (pgbench -l); unset, the engine's hook costs a nil check.
	Transactions observe.TxnSink
	// ShellOut and ShellErr receive what the scripts' \shell commands
	// write, as pgbench passes its own stdout and stderr to them (nil:
	// discarded).
	ShellOut, ShellErr io.Writer
}

// Data is the data the workload runs on.
type Data struct {
	// Init are pgbench -i's options for the data an ephemeral target gets
	// (and a dsn target with Create).
	Init workload.InitOptions
	// Create (--init) (re)creates the data on dsn targets too; ephemeral
	// targets always get it.
	Create bool
	// ScaleGiven says -s was given: a scale the data contradicts is
	// warned about (pgbench reads the scale from the data).
	ScaleGiven bool
	// Setup is a file of SQL run once on every target before measuring;
	// SetupSQL, when set, is that SQL itself (a suite cell's).
	Setup, SetupSQL string
	// NoInit leaves pgbench's data out on ephemeral targets too (a suite
	// whose scripts use their own tables).
	NoInit bool
	// Separate has every ephemeral target of a counted A/B run make its
	// own data in every layout, instead of running on a byte-identical
	// copy of the baseline's (abRig): for a change in how the data is
	// built (an index's construction), which runs on a copy do not see.
	Separate bool
}

// Load is how the load runs, the same on every target: the clients of
// the sweep and how each step's load runs (load.Settings, handed to the
// engine and to agents whole), and what pgscale does around the steps.
type Load struct {
	load.Settings
	Clients  []int
	NoVacuum bool // -n
	// Threads is pgbench's -j: clients are dealt to this many threads for
	// pgbench's per-thread random streams (the choice of scripts, log
	// sampling); 0 is a thread per client. It changes no OS thread.
	Threads int
	// VacuumAccounts is pgbench's -v: pgbench_accounts is vacuumed too.
	VacuumAccounts bool
	// VerboseErrors reports every client error (retried and failed
	// transactions too), not only aborts.
	VerboseErrors bool
	// SourceAddress, when set, is the local address the clients bind
	// when they connect over TCP.
	SourceAddress string
}

// DefaultConnectConcurrency is how many clients connect at once unless
// Load.ConnectConcurrency says otherwise (the engine's default).
const DefaultConnectConcurrency = load.DefaultConnectConcurrency

// RunSpec is one sweep over one target: what pgscale run asks for.
type RunSpec struct {
	Common
	Target target.Spec
	// Pooler, when set, is --pooler's pgbouncer[:k=v,...]: a pgbouncer
	// started in front of Target, which the clients connect to.
	Pooler string
	// Out is the result file (default results/<workload>-<UTC time>.json).
	Out string
	// NoResultFile writes no result file: Run still returns it.
	NoResultFile bool
	// Pgbench, when set, is recorded in the result file (pgscale pgbench).
	Pgbench *result.Pgbench
	// Agents, when set, has agents run the clients (agents.go).
	Agents *AgentsSpec
}

// ABSpec is an A/B run: the same workload on several targets in
// interleaved rounds.
type ABSpec struct {
	Common
	// Targets are the targets, parsed where they were given (--target, a
	// suite file, bisect's commits), the baseline first.
	Targets []target.Spec
	Rounds  int
	// RoundsMax, when positive, rounds until decided (--rounds
	// auto:MAX): after every round the run compares what it has and stops
	// once every bounded measure of every candidate is decided, or after
	// RoundsMax rounds; Rounds is set to it. Budget, when positive, also
	// stops the run before a round that would end past it (--rounds
	// auto:DURATION: RoundsMax is then the rounds that fit in it, which
	// fixes how the looks spend alpha).
	RoundsMax int
	Budget    time.Duration
	// Decide, when set with RoundsMax, decides in place of the bounds,
	// after every complete round, whether the rounds so far are enough,
	// from the files they make: done, and why in words (pgscale bisect
	// classifying a commit by the verdict's outcomes).
	Decide func(files []*result.File) (done bool, why string)
	// Share, in (0, 1), is the part of alpha the run's bounded measures
	// get when it decides them (a suite's cell: 1/cells, as the suite's
	// verdict judges them); 0 means all of it.
	Share float64
	// OrderSeed draws the target order of each round: time, rand or an
	// integer.
	OrderSeed string
	// Slice, when positive, interleaves the targets in slices of this
	// length inside every step; Settle is the part of each slice not
	// counted (default a tenth). SliceGiven says --slice was given: the
	// default gives way to -t, -C and disturbances, a given one does not.
	Slice, Settle time.Duration
	SliceGiven    bool
	// Calibrate runs the baseline against itself (an A/A run), on a
	// server of its own for an ephemeral baseline. Rounds 0 then means
	// its default: ABCalibrateLayoutRounds when the clusters are
	// reshuffled, else ABCalibrateRounds.
	Calibrate bool
	// Reshuffle, when positive, re-creates the run's ephemeral clusters
	// every Reshuffle rounds when the targets run on separate servers
	// (bin:, settings: that need their own cluster), so that each layout
	// of clusters is drawn anew; the comparison then rests on the layouts.
	// 0 keeps the clusters for the whole run. Whether settings targets
	// share the baseline's cluster is Cluster.Separate's. A counted run
	// (--count) not given it makes a new layout every round
	// (CountedReshuffle); ReshuffleGiven says it was given.
	Reshuffle      int
	ReshuffleGiven bool
	// Bounds and Confidence judge the comparison; the bounds are checked
	// against the measures before anything runs and recorded in the
	// result files.
	Bounds     stats.Bounds
	Confidence float64
	// CountedDefaults, for a counted run given no bounds (ab --count
	// without --bound), has it decide on compare.CountedBounds: the
	// counts at one client, the other client counts bounded only where
	// the runner's spread can decide them.
	CountedDefaults bool
	// Out is the directory of the result files (default
	// results/ab-<workload>-<UTC time>).
	Out string
	// Agents, when set, has agents run the clients, each target's step
	// in its turn (whole-step turns only; agents.go).
	Agents *AgentsSpec
}

// check finds what cannot work in the load, before anything starts.
func (l Load) check() error {
	switch {
	case len(l.Clients) == 0:
		return usage.Errorf("-c: give at least one client count")
	case l.Duration > 0 && l.Transactions > 0:
		return usage.Errorf("-T and -t are exclusive: give a duration or a transaction count")
	case l.Duration <= 0 && l.Transactions <= 0:
		return usage.Errorf("-T must be positive (or give -t)")
	case l.Rate < 0:
		return usage.Errorf("--rate must be positive")
	case l.MaxTries < 0:
		return usage.Errorf("--max-tries must be at least 0")
	case l.MaxTries == 0 && l.Duration <= 0 && l.LatencyLimit <= 0:
		return usage.Errorf("--max-tries 0 (unlimited) needs -T or -L")
	case l.ConnectConcurrency < 0:
		return usage.Errorf("--connect-concurrency must be at least 1")
	case l.Threads < 0:
		return usage.Errorf("-j must be positive")
	}
	for _, c := range l.Clients {
		if c < 1 {
			return usage.Errorf("-c: client counts must be positive, got %d", c)
		}
	}
	if _, err := engine.ParseIOMode(l.ioName()); err != nil {
		return usage.Errorf("--io: %v", err)
	}
	if _, err := engine.ParseColocate(l.colocateName()); err != nil {
		return usage.Errorf("--colocate: %v", err)
	}
	if l.SourceAddress != "" && net.ParseIP(l.SourceAddress) == nil {
		return usage.Errorf("--source-address %q is not an IP address", l.SourceAddress)
	}
	return nil
}

func (l Load) colocateName() string { return orAuto(l.Colocate) }

func (l Load) ioName() string { return orAuto(l.IO) }

// orAuto is a mode's name, "auto" when unset.
func orAuto(name string) string {
	if name == "" {
		return "auto"
	}
	return name
}

// maxClients is the largest client count of the sweep.
func (l Load) maxClients() int {
	m := 0
	for _, c := range l.Clients {
		m = max(m, c)
	}
	return m
}

// check finds what cannot work in what every runner takes, and parses the
// disturbances (their windows are checked against the step's duration).
func (c *Common) check() ([]disturb.Disturbance, error) {
	if err := c.Load.check(); err != nil {
		return nil, err
	}
	if err := c.Data.Init.Check(); err != nil {
		return nil, err
	}
	if c.Probes == nil {
		o := probeopt.DefaultOptions()
		c.Probes = &o
	}
	if err := c.Probes.Check(); err != nil {
		return nil, err
	}
	ds, err := disturb.Parse(c.Disturb, c.Load.Duration, c.Load.Transactions)
	if err != nil {
		return nil, err
	}
	return ds, c.checkCount(ds)
}

// loadWorkload parses the scripts and reads the setup file.
func (c *Common) loadWorkload() (*workload.Loaded, string, error) {
	wl, err := workload.Load(c.Workload)
	if err != nil {
		return nil, "", err
	}
	setup := c.Data.SetupSQL
	if c.Data.Setup != "" && setup == "" {
		b, err := os.ReadFile(c.Data.Setup)
		if err != nil {
			return nil, "", usage.Errorf("--setup: %v", err)
		}
		setup = string(b)
	}
	return wl, setup, nil
}

func (c *Common) observer() observe.Observer {
	if c.Observer == nil {
		return observe.Discard
	}
	return c.Observer
}

// notice sends a notice to the observer.
func (c *Common) notice(s string) { c.observer().Observe(observe.Notice{Text: s}) }
