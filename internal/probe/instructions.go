package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// notCounted are the functions of a client backend whose instructions
// (with all they call) are left out of its count, because what they do
// depends on the clock, not on the transactions (docs/counting-instructions.md): secure_read, the read from the client socket, where
// the backend also waits for the client's next message — whether it is
// already there when the backend looks is a matter of timing (up to 0.4 %
// of a select-only transaction's instructions here); and
// pgstat_report_stat, which flushes the statistics to shared memory at
// most once a second as the backend goes idle (14 000 instructions a
// flush, so a window counted more of them the longer it lasted).
var notCounted = []string{"secure_read", "pgstat_report_stat"}

// instrProbe counts the instructions the server's processes execute in
// each step's measured window under callgrind: at the window's start, with
// every client between transactions, it zeroes each process's counters
// and switches its instrumentation on; at the end it switches it off and
// has each process dump what it counted. The client backends'
// instructions per transaction are the measure; the background processes'
// are evidence (they work to the clock, not per transaction). Processes
// that start during the window are not counted. Valgrind sees user space
// only: the kernel's instructions are not counted, the system calls are.
type instrProbe struct {
	cg   Callgrind
	conn *sqlConn
	pid  func() int // the postmaster's pid
	dir  string     // where the pprof files go
	// warm simulates the caches (--count instructions,cache): the
	// postmaster runs instrumented, so that every backend it forks is
	// instrumented from birth and its simulated caches are warm when the
	// window starts (warmBackends).
	warm bool
	// poolerOnly counts the pooler alone (--count pooler): the server runs
	// natively, and its processes are neither switched nor read.
	poolerOnly bool

	// pooler counts a pooler or proxy run under callgrind beside the
	// server; nil without one.
	pooler *poolerCount
	// syms says where each object's function names came from.
	syms objectSymbols

	mu      sync.Mutex
	counted map[int]string // pid -> kind, instrumented in this window
	hint    string
	errs    []string // processes that could not be counted, and why
	ended   bool
	newer   int // processes that started during the window
}

func (p *instrProbe) name() string                              { return probeid.Instructions.Name }
func (p *instrProbe) backends() []int                           { return []int{int(p.conn.pid.Load())} }
func (p *instrProbe) close()                                    { p.conn.close() }
func (p *instrProbe) capture(context.Context, *stepState) error { return nil }
func (p *instrProbe) begin(context.Context, *stepState) (func(<-chan struct{}), error) {
	return nil, nil
}

// processes lists the server's processes but the postmaster, by pid, with
// their backend_type from pg_stat_activity (the probes' own backends as
// KindProbe). Under Valgrind a process's title is not its command line,
// so the title cannot tell.
func (p *instrProbe) processes(ctx context.Context) (map[int]string, error) {
	pm := p.pid()
	kids, ok := children(pm)
	if !ok {
		return nil, fmt.Errorf("cannot list the children of the postmaster (pid %d)", pm)
	}
	rows, err := p.conn.query(ctx, "SELECT pid, backend_type, application_name = $1 FROM pg_stat_activity", probeApplicationName)
	if err != nil {
		return nil, fmt.Errorf("list the server's processes: %w", err)
	}
	kind := map[int]string{}
	for _, r := range rows {
		pid, _ := strconv.Atoi(string(r[0]))
		k := string(r[1])
		if string(r[2]) == "t" {
			k = KindProbe
		}
		kind[pid] = k
	}
	out := map[int]string{}
	for _, pid := range kids {
		k := kind[pid]
		if k == "" {
			k = "other"
		}
		out[pid] = k
	}
	return out, nil
}

// edge switches counting on (start) or off and dumps, on every counted
// process at once.
func (p *instrProbe) edge(ctx context.Context, info observe.StepInfo, start bool) error {
	if p.poolerOnly {
		// The pooler alone: its servers run natively, and every client
		// is between transactions at either edge.
		if start {
			p.mu.Lock()
			p.counted, p.errs, p.ended, p.newer = map[int]string{}, nil, false, 0
			p.hint = fmt.Sprintf("pgscale-r%d-s%d-c%d", info.Round, info.Index+1, info.Clients)
			p.mu.Unlock()
			return p.pooler.edge(ctx, true, p.hint)
		}
		err := p.pooler.edge(ctx, false, p.hint)
		p.mu.Lock()
		p.ended = true
		p.mu.Unlock()
		return err
	}
	if start {
		procs, err := p.processes(ctx)
		if err != nil {
			return err
		}
		p.mu.Lock()
		p.counted, p.errs, p.ended, p.newer = map[int]string{}, nil, false, 0
		p.hint = fmt.Sprintf("pgscale-r%d-s%d-c%d", info.Round, info.Index+1, info.Clients)
		for pid, k := range procs {
			if k != KindProbe {
				p.counted[pid] = k
			}
		}
		p.mu.Unlock()
		if err := p.waitIdle(ctx); err != nil {
			return err
		}
		if p.pooler != nil {
			if err := p.pooler.edge(ctx, true, p.hint); err != nil {
				return err
			}
		}
		if p.warm {
			// Instrumented since its fork, a backend is zeroed with a
			// dump: callgrind's zero command leaves the system calls
			// counted so far in place (and some instructions: +100 a
			// select-only transaction here), a dump leaves nothing.
			err := p.control(ctx, "dump "+p.hint+"-before", "instrumentation on")
			p.removeDumps()
			return err
		}
		return p.control(ctx, "zero", "instrumentation on")
	}
	if err := p.waitIdle(ctx); err != nil {
		return err
	}
	err := p.control(ctx, "instrumentation off", "dump "+p.hint)
	if p.pooler != nil {
		err = errors.Join(err, p.pooler.edge(ctx, false, p.hint))
	}
	if procs, perr := p.processes(ctx); perr == nil {
		p.mu.Lock()
		for pid, k := range procs {
			if _, ok := p.counted[pid]; !ok && k != KindProbe {
				p.newer++
			}
		}
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
	if p.warm {
		err = errors.Join(err, p.warmBackends(ctx))
	}
	return err
}

// warmBackends switches the postmaster's instrumentation on, so that the
// backends it forks from then on run instrumented, their simulated
// caches filled by their connection and the step's warm-up: a backend
// whose instrumentation is switched on only at the window's start
// begins it with empty caches, and the misses of filling them (11 000
// last-level misses here, 0.7 MB) are then a share of each transaction
// that depends on how many the window holds (select-only at one client:
// 15.8 last-level misses per transaction with -t 1000, 6.7 with -t
// 6000). It is done when the probe opens and again after every window,
// for a postmaster that was restarted.
func (p *instrProbe) warmBackends(ctx context.Context) error {
	pm := p.pid()
	if _, err := p.cg.Control(ctx, pm, "instrumentation on"); err != nil {
		return fmt.Errorf("postmaster %d: %w", pm, err)
	}
	return nil
}

// Idleness: a client backend is idle when it sleeps and has not run for
// idlePoll; waitIdle gives up after idleTimeout.
const (
	idlePoll    = 5 * time.Millisecond
	idleTimeout = 10 * time.Second
)

// waitIdle waits until every counted client backend has gone to sleep
// waiting for its client. The clients are between transactions at an
// edge, but a backend that has sent its last result still has its way
// back to that wait to go (statistics, timers), and the edge must fall
// at the same place of it every time.
func (p *instrProbe) waitIdle(ctx context.Context) error {
	p.mu.Lock()
	var pids []int
	for pid, k := range p.counted {
		if k == "client backend" {
			pids = append(pids, pid)
		}
	}
	p.mu.Unlock()
	last := map[int]uint64{}
	deadline := time.Now().Add(idleTimeout)
	for len(pids) > 0 {
		var busy []int
		for _, pid := range pids {
			run, sleeping, ok := runTime(pid)
			if !ok {
				continue // gone: control says so
			}
			if prev, seen := last[pid]; !seen || !sleeping || run != prev {
				busy = append(busy, pid)
			}
			last[pid] = run
		}
		if pids = busy; len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("client backends %v still running %v after the clients stopped", pids, idleTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(idlePoll):
		}
	}
	return nil
}

// runTime reads a process's time on CPU so far (schedstat, ns) and
// whether it sleeps now (stat's state S).
func runTime(pid int) (run uint64, sleeping, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	st, err := os.ReadFile(dir + "stat")
	if err != nil {
		return 0, false, false
	}
	s := string(st)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+3 > len(s) {
		return 0, false, false
	}
	sc, err := os.ReadFile(dir + "schedstat")
	if err != nil {
		return 0, false, false
	}
	f := strings.Fields(string(sc))
	if len(f) == 0 {
		return 0, false, false
	}
	run, err = strconv.ParseUint(f[0], 10, 64)
	return run, s[i+2] == 'S', err == nil
}

// control sends commands to every counted process in parallel. A process
// gone meanwhile is left out; a client backend that cannot be reached is
// an error (the count would miss it).
func (p *instrProbe) control(ctx context.Context, commands ...string) error {
	p.mu.Lock()
	pids := make([]int, 0, len(p.counted))
	for pid := range p.counted {
		pids = append(pids, pid)
	}
	p.mu.Unlock()
	errs := make([]error, len(pids))
	var wg sync.WaitGroup
	for i, pid := range pids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = p.cg.Control(ctx, pid, commands...)
		}()
	}
	wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	var fatal []error
	for i, err := range errs {
		if err == nil {
			continue
		}
		k := p.counted[pids[i]]
		delete(p.counted, pids[i])
		p.errs = append(p.errs, fmt.Sprintf("%s %d: %v", k, pids[i], err))
		if k == "client backend" {
			fatal = append(fatal, err)
		}
	}
	return errors.Join(fatal...)
}

func (p *instrProbe) report(_ context.Context, st *stepState, out *result.Probes) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ended {
		return errors.New("the measured window did not end with every client idle")
	}
	tx := st.step.Summary.Transactions
	ev := &result.Instructions{Tool: "callgrind", Transactions: tx, NotCounted: p.errs, StartedInWindow: p.newer,
		Kernel:  "not counted: Valgrind runs user space only (the system calls are counted)",
		Without: strings.Join(notCounted, ", ")}
	ev.ByKind = []result.InstructionGroup{} // none when the pooler is counted alone
	kinds := map[string]*result.InstructionGroup{}
	var clients []*CallgrindDump
	var client Cost // the client backends' counts, without notCounted
	pids := make([]int, 0, len(p.counted))
	for pid := range p.counted {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	for _, pid := range pids {
		d, err := p.readDump(pid)
		if err != nil {
			return err
		}
		k := p.counted[pid]
		g := kinds[k]
		if g == nil {
			g = &result.InstructionGroup{Kind: k}
			kinds[k] = g
		}
		c := d.Total()
		if k == "client backend" {
			c = Cost{}
			for _, fc := range d.Functions(notCounted) {
				c = c.add(fc.Self)
			}
			clients = append(clients, d)
			client = client.add(c)
		}
		g.Processes++
		g.Instructions += c.Ir
		g.Syscalls += c.Syscalls
	}
	for _, g := range kinds {
		ev.ByKind = append(ev.ByKind, *g)
	}
	sort.Slice(ev.ByKind, func(i, j int) bool { return ev.ByKind[i].Kind < ev.ByKind[j].Kind })
	if g := kinds["client backend"]; g != nil {
		ev.ClientBackends, ev.ClientSyscalls = g.Instructions, g.Syscalls
		if tx > 0 {
			ev.PerTxn = float64(g.Instructions) / float64(tx)
		}
	}
	if len(clients) > 0 {
		fs := clientFunctions(clients)
		clock := clockReads(fs)
		ev.ClientClockReads = &clock
		ev.FunctionsFloor = max(1, uint64(float64(client.Ir)*functionsFloor))
		ev.Functions = functionCounts(fs, ev.FunctionsFloor)
		if caches := clients[0].Caches; len(caches) > 0 {
			ev.Cache = cacheSim(client, caches)
		}
	}
	out.SetInstructions(ev)
	name := filepath.Join(p.dir, strings.TrimSuffix(profileName(st.info), ".pb.gz")+".instructions.pb.gz")
	if p.pooler != nil {
		if err := p.pooler.report(ev, p.hint, poolerProfileName(name), fmt.Sprintf("%d clients", st.info.Clients)); err != nil {
			return err
		}
	}
	if len(clients) == 0 {
		return nil
	}
	prof, err := CallgrindProfile(clients, p.counted, fmt.Sprintf("%d clients", st.info.Clients), notCounted...)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return fmt.Errorf("profile directory: %w", err)
	}
	if err := writeProfile(name, prof); err != nil {
		return err
	}
	out.SetProfile(summarize(prof, name, &p.syms))
	out.Profile().Unit = "instructions"
	return nil
}

// functionsFloor is the share of the client backends' instructions below
// which a function's inclusive count is left out of the result file's
// functions (unless it made system calls): at 40 000 instructions per
// transaction, 0.4 a transaction.
const functionsFloor = 1e-5

// clientFunctions sums the client backends' counts per function, without
// notCounted and what ran inside them. Callgrind names a recursive
// function's deeper levels apart ("JumbleExpr'2"); they are one function
// here: their own counts add up, and the outermost level's inclusive
// count holds the deeper levels'.
func clientFunctions(dumps []*CallgrindDump) map[CallgrindFunc]FuncCost {
	out := map[CallgrindFunc]FuncCost{}
	for _, d := range dumps {
		for f, c := range d.Functions(notCounted) {
			name, deeper := recursionLevel(f.Name)
			f.Name = name
			o := out[f]
			o.Self = o.Self.add(c.Self)
			if !deeper {
				o.Inclusive = o.Inclusive.add(c.Inclusive)
			}
			out[f] = o
		}
	}
	for f, o := range out {
		if o.Inclusive.Ir < o.Self.Ir { // deeper levels only: the window began inside
			o.Inclusive = o.Self
			out[f] = o
		}
	}
	return out
}

// recursionLevel cuts callgrind's recursion level off a function's name
// ("f'2" is f called within f): the name, and whether it was a deeper
// level.
func recursionLevel(name string) (string, bool) {
	i := strings.LastIndexByte(name, '\'')
	if i <= 0 || i == len(name)-1 {
		return name, false
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return name, false
		}
	}
	return name[:i], true
}

// clockReads are the system calls made by the functions that read the
// clock (result.ClockFunction).
func clockReads(fs map[CallgrindFunc]FuncCost) uint64 {
	var n uint64
	for f, c := range fs {
		if result.ClockFunction(f.Name) {
			n += c.Self.Syscalls
		}
	}
	return n
}

// functionCounts are the result file's functions: those whose inclusive
// instructions reach floor or that made system calls, by own instructions,
// most first.
func functionCounts(fs map[CallgrindFunc]FuncCost, floor uint64) []result.FunctionCount {
	var out []result.FunctionCount
	for f, c := range fs {
		if c.Inclusive.Ir < floor && c.Inclusive.Syscalls == 0 {
			continue
		}
		out = append(out, result.FunctionCount{Function: f.Name, Object: filepath.Base(f.Object),
			Self: c.Self.Ir, Inclusive: c.Inclusive.Ir, Syscalls: c.Self.Syscalls, SyscallsInclusive: c.Inclusive.Syscalls,
			EstCycles: c.Self.EstCycles(), EstCyclesInclusive: c.Inclusive.EstCycles()})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Self != b.Self {
			return a.Self > b.Self
		}
		if a.Function != b.Function {
			return a.Function < b.Function
		}
		return a.Object < b.Object
	})
	return out
}

// cacheSim is the result file's record of the cache and branch
// simulation: the caches simulated, the client backends' events and
// their estimated cycles.
func cacheSim(c Cost, caches map[string]string) *result.CacheSim {
	v := c.vec()
	ev := map[string]uint64{}
	for i, n := range eventNames {
		if n != "sysCount" {
			ev[n] = v[i]
		}
	}
	return &result.CacheSim{I1: caches["I1"], D1: caches["D1"], LL: caches["LL"], Events: ev,
		EstCycles: c.EstCycles(), Model: CycleModel}
}

// removeDumps removes the counted processes' dump files: at a window's
// start, those are the dumps that zeroed them.
func (p *instrProbe) removeDumps() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pid := range p.counted {
		files, _ := filepath.Glob(p.cg.Out(pid) + ".*")
		for _, name := range files {
			os.Remove(name)
		}
	}
}

// readDump reads the dump of process pid with this window's hint, and
// removes it.
func (p *instrProbe) readDump(pid int) (*CallgrindDump, error) { return readDump(p.cg, pid, p.hint) }

// Edges reports whether the set acts at the windows' edges: when it
// counts instructions.
func (s *Set) Edges() bool {
	for _, p := range s.probes {
		if _, ok := p.(edger); ok {
			return true
		}
	}
	return false
}

// Edge passes a window's edge to the probes that act there. At the end
// the other probes take their last snapshots first (End), while the
// clients are held there, connected, and before the counts are dumped.
func (s *Set) Edge(ctx context.Context, info observe.StepInfo, start bool) error {
	if !start {
		s.End(ctx, info)
	}
	for _, p := range s.probes {
		if e, ok := p.(edger); ok {
			if err := timed(s.costs[p.name()], func() error { return e.edge(ctx, info, start) }); err != nil {
				return fmt.Errorf("counting instructions: %w", err)
			}
		}
	}
	return nil
}

// edger is a probe that acts at the edges of the measured window.
type edger interface {
	edge(ctx context.Context, info observe.StepInfo, start bool) error
}

var _ observe.EdgeWatcher = (*Set)(nil)

// The caches the simulation of --count instructions,cache models, the
// same on every machine so that counts compare across machines (the
// host's own, which callgrind would read from cpuid, are whatever a
// hypervisor says: 512 MB, 2-way, on this VM): Intel Haswell's L1s of 32
// KiB, 8-way, and a last level of 8 MiB, 16-way, with 64-byte lines, the
// geometry the published cachegrind benchmarking scripts fix for the
// same reason and tuned their cost model (CycleModel) with.
// CacheSimOptions are callgrind's options for the cache and branch
// simulation of --count instructions,cache (probeopt's).
func CacheSimOptions() []string { return probeopt.CacheSimOptions() }

func init() { register(instructionsDef) }

var instructionsDef = def{
	id: probeid.Instructions, flag: "",
	evidence: "count the server's instructions per transaction under Valgrind (--count instructions)",
	flags: func(fs *pflag.FlagSet, o *Options) {
		fs.Var(probeopt.CountFlag(o), "count", "instructions[,cache]: run ephemeral servers under Valgrind's callgrind and count the instructions of every transaction (needs -t; 20 to 50 times slower); with cache also simulate caches and branch prediction for misses and estimated cycles per transaction (slower again)")
	},
	open: func(ctx context.Context, cfg Config, s *Set) (probe, error) {
		cg := cfg.Server.Callgrind()
		pl := cfg.Server.Pooler()
		pooled := pl != nil && pl.Callgrind() != nil && cfg.poolerPID() != 0
		switch {
		case cfg.PoolerOnly && !pooled:
			return nil, usage.Errorf("--count pooler counts a pooler's instructions alone: it needs a pooler or proxy target (pgbouncer:, proxy:) started under Valgrind")
		case !cfg.PoolerOnly && (cg == nil || !cfg.Server.Ephemeral()):
			return nil, usage.Errorf("--count instructions needs a server started under Valgrind (an ephemeral target)")
		}
		conn, err := newSQLConn(ctx, cfg.conn())
		if err != nil {
			return nil, err
		}
		dir := cfg.ProfileDir
		if dir == "" {
			dir = "profiles"
		}
		p := &instrProbe{conn: conn, pid: cfg.Server.PID, dir: dir, warm: cfg.CacheSim, poolerOnly: cfg.PoolerOnly}
		if cg != nil {
			p.cg = *cg
		}
		if pooled {
			p.pooler = &poolerCount{cg: *pl.Callgrind(), root: cfg.poolerPID()}
		}
		if p.warm {
			if err := p.warmBackends(ctx); err != nil {
				conn.close()
				return nil, err
			}
		}
		return p, nil
	},
}
