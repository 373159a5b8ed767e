package cli

import (
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/syncio"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// common is what run, ab, bisect, pgbench and a suite's cells give of the
// experiment, as given — flag values, file paths, the suite file's
// values —, read once into an experiment.Common (check, then workload)
// and checked there, in the flags' words.
type common struct {
	Argv    []string
	Version string
	// Cluster shapes the ephemeral clusters the run starts.
	Cluster  target.ClusterOptions
	Workload workload.Spec
	Data     dataGiven
	Load     loadGiven
	// Probes choose the server-side probes (nil: the defaults).
	Probes *probeopt.Options
	// Disturb schedules disturbances in every step.
	Disturb  disturb.Request
	Observer observe.Observer
	// Expect are decision rules on the sweep as written (run --expect).
	Expect []string
	// Transactions, when set, receives every transaction as it ends.
	Transactions observe.TxnSink
	// ShellOut and ShellErr receive what the scripts' \shell commands
	// write (nil: discarded).
	ShellOut, ShellErr io.Writer
}

// dataGiven is the data the workload runs on, as given.
type dataGiven struct {
	Init       workload.InitOptions
	Create     bool // --init: (re)create pgbench's data on dsn targets too
	ScaleGiven bool // -s was given
	// Setup is a file of SQL run once on every target before measuring
	// (--setup); SetupSQL, when set, is that SQL itself (a suite cell's).
	Setup, SetupSQL string
	// NoInit leaves pgbench's data out on ephemeral targets too (a suite
	// whose scripts use their own tables).
	NoInit bool
	// Separate: --separate-data.
	Separate bool
}

// loadGiven is how the load runs, as given.
type loadGiven struct {
	load.Settings
	Clients        []int
	NoVacuum       bool
	Threads        int
	VacuumAccounts bool
	VerboseErrors  bool
	SourceAddress  string
}

// check finds what cannot work in the load, before anything starts.
func (l loadGiven) check() error {
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
	return nil
}

// check reads and checks what every runner takes but the workload
// (workload reads that): the load, the data's options, the probes, the
// disturbances (their windows against the step's duration), the decision
// rules, and counting's needs. What the experiment holds is settled here:
// the probes' defaults, and when counting Valgrind found, the hardware
// counters off, every target on a server of its own.
func (g *common) check() (*experiment.Common, error) {
	if err := g.Load.check(); err != nil {
		return nil, err
	}
	l := experiment.Load{Settings: g.Load.Settings, Clients: g.Load.Clients, NoVacuum: g.Load.NoVacuum, Threads: g.Load.Threads,
		VacuumAccounts: g.Load.VacuumAccounts, VerboseErrors: g.Load.VerboseErrors}
	if what, err := l.CheckModes(); err != nil {
		return nil, usage.Errorf("--%s: %v", what, err)
	}
	if a := g.Load.SourceAddress; a != "" {
		if l.SourceAddress = net.ParseIP(a); l.SourceAddress == nil {
			return nil, usage.Errorf("--source-address %q is not an IP address", a)
		}
	}
	if err := g.Data.Init.Check(); err != nil {
		return nil, optionError(err)
	}
	probes := probeopt.DefaultOptions()
	if g.Probes != nil {
		probes = g.Probes.Clone()
	}
	if err := probes.Check(); err != nil {
		return nil, err
	}
	ds, err := disturb.Parse(g.Disturb, g.Load.Duration, g.Load.Transactions)
	if err != nil {
		return nil, err
	}
	exps, err := compare.ParseExpectations(g.Expect)
	if err == nil {
		err = compare.CheckClients(exps, g.Load.Clients)
	}
	if err != nil {
		return nil, usage.Wrap(err)
	}
	c := &experiment.Common{Argv: secret.RedactAll(g.Argv), Version: g.Version, Cluster: g.Cluster, Load: l, Probes: probes,
		Disturbances: ds, Observer: g.Observer, Expect: exps, Transactions: g.Transactions,
		Data: experiment.Data{Init: g.Data.Init, Create: g.Data.Create, Recreate: "pass --init",
			MakeTables: "run `pgscale init --dsn ...` first, or pass --init to create them", ScaleGiven: g.Data.ScaleGiven, Separate: g.Data.Separate}}
	if g.ShellOut != nil {
		c.ShellOut = syncio.NewWriter(g.ShellOut)
	}
	if g.ShellErr != nil {
		c.ShellErr = syncio.NewWriter(g.ShellErr)
	}
	return c, checkCount(c)
}

// checkCount finds what cannot go with --count instructions before
// anything starts, and finds Valgrind: every ephemeral server then runs
// under it. The transactions counted must be exactly those run between
// the window's edges: -t, no connection per transaction, no disturbance.
func checkCount(c *experiment.Common) error {
	if !c.Counting() {
		return nil
	}
	switch {
	case c.Load.Transactions <= 0:
		return usage.Errorf("--count instructions needs -t (transactions per client), not -T: under Valgrind the server runs about 50 times slower, and the count is exact only over whole transactions")
	case c.Load.Connect:
		return usage.Errorf("--count instructions counts the backends connected when the window starts: -C opens a new one for every transaction")
	case len(c.Disturbances) > 0:
		return usage.Errorf("--count instructions counts the clients' transactions alone: drop --disturb")
	}
	v, err := findValgrind()
	if err != nil {
		return err
	}
	if c.Probes.CacheSim {
		v.Extra = probeopt.CacheSimOptions()
	}
	// Hardware counters would count Valgrind's work, not the server's.
	c.Probes.Set(probeid.Counters.Name, false)
	c.Cluster.Valgrind = v
	// Every target counts on a server of its own, started the same way:
	// on a shared server the first target to run pays, in its count, for
	// what a fresh server does once (0.5 % in the first round here). Its
	// layout is fixed (no address-space randomisation, a fixed
	// environment), but not its data: what the set-up builds with
	// randomness (an index graph, a sample, a table's physical order)
	// differs from one cluster to the next, so an A/B run re-creates them
	// every round by default (ab.CountedReshuffle).
	c.Cluster.Separate = true
	return nil
}

// workload reads the scripts and the set-up SQL into c, and decides
// whether ephemeral targets get pgbench's data: the scripts use its
// tables (a built-in script, or SQL naming pgbench_...), or the set-up
// SQL or a disturbance does (a --disturb-file's script is not read here:
// with one, the data is made).
func (g *common) workload(c *experiment.Common) error {
	wl, err := workload.Load(g.Workload)
	if err != nil {
		return optionError(err)
	}
	setup := g.Data.SetupSQL
	if g.Data.Setup != "" && setup == "" {
		b, err := os.ReadFile(g.Data.Setup)
		if err != nil {
			return usage.Errorf("--setup: %v", err)
		}
		setup = string(b)
	}
	c.Workload, c.Data.Setup, c.Data.SetupName = wl, setup, "the suite's setup"
	if g.Data.Setup != "" {
		c.Data.SetupName = "--setup " + g.Data.Setup
	}
	c.Data.Pgbench = !g.Data.NoInit && g.usesPgbench(wl, setup)
	return nil
}

// usesPgbench says the workload, the set-up or a disturbance uses
// pgbench's tables.
func (g *common) usesPgbench(wl *workload.Loaded, setup string) bool {
	if wl.UsesPgbenchTables() || strings.Contains(strings.ToLower(setup), "pgbench_") || len(g.Disturb.Files) > 0 {
		return true
	}
	for _, d := range g.Disturb.Builtins {
		if strings.Contains(strings.ToLower(d), "pgbench_") {
			return true
		}
	}
	return false
}

// checkAgents refuses what agents cannot do in any run, and makes the
// ephemeral clusters among specs reachable by them: listening on
// 127.0.0.1 too, and letting every loopback address in (agents on this
// machine stand for several by connecting from 127.0.0.11, .12...).
func checkAgents(a *experiment.Agents, c *experiment.Common, specs []target.Spec) error {
	if a == nil {
		return nil
	}
	switch {
	case a.Count < 1:
		return usage.Errorf("--agents must be at least 1, got %d", a.Count)
	case a.Coordinator == "":
		return usage.Errorf("--agents needs --coordinator DSN: the PostgreSQL database that holds the barrier and the agents' data")
	case c.Counting():
		return usage.Errorf("--agents and --count instructions: counting quiesces the clients at the window's edges, which agents on other machines cannot do")
	case c.Transactions != nil:
		return usage.Errorf("--agents: a transaction log (-l) is written by the process that runs the clients; the agents do not write one")
	case c.Load.SourceAddress != nil:
		return usage.Errorf("--agents and --source-address: give each agent its own --source-address")
	}
	reachable(&c.Cluster, specs)
	return nil
}

// loopbackHBA lets clients from any loopback address reach an ephemeral
// cluster.
const loopbackHBA = "host all all 127.0.0.0/8 trust"

// reachable makes the ephemeral clusters among specs reachable by agents.
func reachable(o *target.ClusterOptions, specs []target.Spec) {
	for _, s := range specs {
		if s.Ephemeral() {
			o.TCP = true
			if !slices.Contains(o.HBA, loopbackHBA) {
				o.HBA = append(o.HBA, loopbackHBA)
			}
			return
		}
	}
}

// checkOut refuses, before anything starts, a result destination that
// cannot be written: a file (dir false) or a directory of files (a
// bundle, an A/B run's files). A run takes minutes; finding out at its
// end loses it.
func checkOut(path string, dir bool) error {
	var err error
	if dir {
		err = result.CheckWritableDir(path)
	} else {
		err = result.CheckWritable(path)
	}
	if err != nil {
		return usage.Errorf("the results cannot be written at %s: %v; nothing was run (choose another --out)", path, err)
	}
	return nil
}

// openFilesSlack is what pgscale keeps open besides its clients'
// connections: the probes' and disturbances' own connections, result and
// log files, perf's pipes, the Go runtime's epoll and timers.
const openFilesSlack = 64

// checkOpenFiles makes room in pgscale's open-files limit for clients
// clients holding perClient connections each, plus sessions of its own:
// it raises the soft limit to the hard one (Go does so at start-up; a
// parent may have started it lower since), and a count that still cannot
// fit is a usage error naming the limit.
func checkOpenFiles(clients, perClient, sessions int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("read the open-files limit: %w", err)
	}
	need := uint64(clients*perClient + sessions + openFilesSlack)
	if lim.Cur < need && lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			lim = raised
		}
	}
	if need <= lim.Cur {
		return nil
	}
	conns := "one connection per client"
	if perClient > 1 {
		conns = fmt.Sprintf("a connection per client to each of %d targets", perClient)
	}
	return usage.Errorf("-c %d: %d clients need about %d open files in pgscale (%s), but its open-files limit is %d (hard limit %d, ulimit -Hn): use fewer clients or raise the hard limit",
		clients, clients, need, conns, lim.Cur, lim.Max)
}
