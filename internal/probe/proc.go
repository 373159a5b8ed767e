package probe

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

// userHZ is the unit of the CPU times in /proc/PID/stat; Linux exports
// USER_HZ = 100 on every architecture.
const userHZ = 100

// Process kinds, as recorded in ProcGroup.Kind.
const (
	KindClientBackend = result.KindClientBackend
	KindBackground    = result.KindBackground
	KindProbe         = result.KindProbe
	KindExited        = result.KindExited
)

// procProbe accounts CPU, run-queue wait and context switches of the
// server's processes, the load generator, a pooler, and the whole host.
type procProbe struct {
	fs        procfs.FS
	serverPID int
	poolerPID int
	note      string
	cpus      int
	probePIDs func() map[int]string
	pidFunc   func() int // the postmaster's pid now, when it may change
	cfg       Config     // to find the server again after a restart
	// restarted holds the postmaster's pid before and after, when the one
	// a step began with was gone at its end: the server restarted.
	restarted [2]int
	// clients, for a server run under Valgrind, are its client backends'
	// pids as pg_stat_activity says at each snapshot (activity, through
	// conn): a process's command line there is Valgrind's, not its title,
	// so backendKind cannot tell them, and a counted run's server line
	// listed no client backend.
	clients  map[int]bool
	activity *sqlConn
	// clientsMu guards clients and the activity connection, which the
	// step's loop reads while it runs.
	clientsMu sync.Mutex

	first, last *procSnap
	// poolerLast is the pooler's tree as last read during the step
	// (poolerEvery), under poolerMu: a pooler that exits before the
	// step's end leaves what it used until then, not nothing.
	poolerMu   sync.Mutex
	poolerLast *procSnap
	// lastProbeCPU is the server CPU of each probe's backends in the last
	// step, lastCollectorCPU that of pg_wait_sampling's collector.
	lastProbeCPU     map[string]float64
	lastCollectorCPU float64
}

// taskSample is one process's counters at one moment.
type taskSample struct {
	kind      string
	start     uint64  // start time in clock ticks after boot: tells a reused pid
	collector bool    // pg_wait_sampling's collector
	cpu       float64 // utime + stime, seconds
	user, sys float64 // utime and stime, seconds
	children  float64 // cutime + cstime of reaped children, seconds
	run, wait float64 // schedstat, seconds
	vcs, ivcs uint64
}

type procSnap struct {
	at      time.Time
	host    procfs.CPUStat
	hostOK  bool
	psi     map[string][2]uint64 // resource -> some, full totals (µs)
	server  map[int]taskSample
	pooler  map[int]taskSample
	genCPU  float64
	genVCS  int64
	genIVCS int64
	threads map[int]taskSample // generator tid -> start, run, wait
}

func newProcProbe(ctx context.Context, cfg Config) (*procProbe, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, fmt.Errorf("no /proc: %w", err)
	}
	p := &procProbe{fs: fs, poolerPID: cfg.poolerPID(), cpus: runtime.NumCPU(),
		probePIDs: func() map[int]string { return nil }, cfg: cfg}
	if cfg.Server.Ephemeral() {
		p.pidFunc = cfg.Server.PID
	}
	if p.pidFunc != nil {
		p.serverPID = p.pidFunc()
	}
	if cfg.Server.Callgrind() != nil && cfg.conn() != nil {
		if p.activity, err = newSQLConn(ctx, cfg.conn()); err != nil {
			return nil, err
		}
	}
	if p.serverPID == 0 {
		p.serverPID, p.note = findServer(ctx, fs, cfg)
	} else {
		p.note = fmt.Sprintf("postmaster pid %d (ephemeral cluster)", p.serverPID)
	}
	return p, nil
}

// findServer finds the postmaster of the target on this host: it connects,
// asks for its backend's pid and start time, and accepts the process with
// that pid when it is a postgres process started at that time. Its parent
// is the postmaster.
func findServer(ctx context.Context, fs procfs.FS, cfg Config) (int, string) {
	c, err := newSQLConn(ctx, cfg.conn())
	if err != nil {
		return 0, "server processes not found: " + err.Error()
	}
	defer c.close()
	rows, err := c.query(ctx, "SELECT pg_backend_pid(), extract(epoch FROM backend_start) FROM pg_stat_activity WHERE pid = pg_backend_pid()")
	if err != nil || len(rows) != 1 {
		return 0, fmt.Sprintf("server processes not found: %v", err)
	}
	pid, started := int(atoi64(rows[0][0])), atof(rows[0][1])
	proc, err := fs.Proc(pid)
	if err != nil {
		return 0, "the server runs on another host (or in another pid namespace): its processes are not visible here"
	}
	st, err := proc.Stat()
	if err != nil {
		return 0, "server processes not readable: " + err.Error()
	}
	t, err := st.StartTime()
	if err != nil || st.Comm != "postgres" || math.Abs(t-started) > 2 {
		return 0, "the server runs on another host (or in another pid namespace): its processes are not visible here"
	}
	return st.PPID, fmt.Sprintf("postmaster pid %d (found from backend %d on this host)", st.PPID, pid)
}

func (p *procProbe) name() string { return probeid.Process.Name }

func (p *procProbe) backends() []int {
	if p.activity == nil {
		return nil
	}
	return []int{int(p.activity.pid.Load())}
}

func (p *procProbe) close() {
	if p.activity != nil {
		p.activity.close()
	}
}

// readClients adds the client backends' pids that pg_stat_activity lists
// to clients, for a server whose process titles cannot be read; nothing
// otherwise. It reads during the step as well as at its ends: a counted
// backend leaves pg_stat_activity when its client goes but lives on while
// callgrind writes its counts, and a loaded machine delays that past the
// step's capture (the server: line then named no client backend). A
// failed read leaves the pids unknown (background), as before.
func (p *procProbe) readClients(ctx context.Context) {
	if p.activity == nil {
		return
	}
	p.clientsMu.Lock()
	defer p.clientsMu.Unlock()
	rows, err := p.activity.query(ctx, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND application_name <> $1", probeApplicationName)
	if err != nil {
		return
	}
	if p.clients == nil {
		p.clients = map[int]bool{}
	}
	for _, r := range rows {
		p.clients[int(atoi64(r[0]))] = true
	}
}

// isClient says whether pid was seen as a client backend.
func (p *procProbe) isClient(pid int) bool {
	p.clientsMu.Lock()
	defer p.clientsMu.Unlock()
	return p.clients[pid]
}

func (p *procProbe) begin(ctx context.Context, st *stepState) (func(<-chan struct{}), error) {
	if p.pidFunc != nil {
		if pid := p.pidFunc(); pid != 0 && pid != p.serverPID {
			p.serverPID = pid
			p.note = fmt.Sprintf("postmaster pid %d (ephemeral cluster, restarted)", pid)
		}
	}
	if p.restarted[0] != 0 {
		p.note = fmt.Sprintf("postmaster pid %d (found again after a restart)", p.serverPID)
	}
	p.restarted = [2]int{}
	p.clientsMu.Lock()
	p.clients = nil
	p.clientsMu.Unlock()
	p.readClients(ctx)
	s, err := p.snapshot()
	if err != nil {
		return nil, err
	}
	p.first = s
	p.poolerMu.Lock()
	p.poolerLast = nil
	p.poolerMu.Unlock()
	if p.activity == nil && p.poolerPID == 0 {
		return nil, nil
	}
	return func(stop <-chan struct{}) {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				if p.activity != nil {
					p.readClients(ctx)
				}
				if p.poolerPID != 0 && n%poolerReadEvery == 0 {
					p.readPooler()
				}
			}
		}
	}, nil
}

// poolerReadEvery is how many of the loop's quarter seconds pass between
// two readings of the pooler's processes: a pooler that exits during the
// step loses at most half a second of its CPU from the step's figures.
const poolerReadEvery = 2

// readPooler reads the pooler's processes, while it runs, as the last
// reading of them (poolerLast).
func (p *procProbe) readPooler() {
	s := &procSnap{at: time.Now(), server: map[int]taskSample{}, pooler: map[int]taskSample{}}
	if !isAlive(p.fs, p.poolerPID) {
		return
	}
	for _, pid := range append([]int{p.poolerPID}, descendants(p.poolerPID)...) {
		proc, err := p.fs.Proc(pid)
		if err != nil {
			continue
		}
		st, err := proc.Stat()
		if err != nil || st.State == "Z" {
			continue
		}
		if ts, ok := p.task(proc, st); ok {
			s.pooler[pid] = ts
		}
	}
	if len(s.pooler) > 0 {
		p.poolerMu.Lock()
		p.poolerLast = s
		p.poolerMu.Unlock()
	}
}

// isAlive says whether pid is a live process (not a zombie).
func isAlive(fs procfs.FS, pid int) bool {
	proc, err := fs.Proc(pid)
	if err != nil {
		return false
	}
	st, err := proc.Stat()
	return err == nil && st.State != "Z"
}

func (p *procProbe) capture(ctx context.Context, _ *stepState) error {
	p.refind(ctx)
	p.readClients(ctx)
	var err error
	p.last, err = p.snapshot()
	return err
}

// refind finds the postmaster again when the one the step began with is
// gone: the server restarted during the step. Its new processes are
// counted from their start; the old ones' CPU after the step began is
// lost with them, as the note says.
func (p *procProbe) refind(ctx context.Context) {
	if p.serverPID == 0 || p.serverAlive() {
		return
	}
	old, pid := p.serverPID, 0
	if p.pidFunc != nil {
		pid = p.pidFunc()
	} else {
		pid, _ = findServer(ctx, p.fs, p.cfg)
	}
	if pid == 0 || pid == old {
		p.note = fmt.Sprintf("postmaster pid %d is gone, and no server was found again on this host", old)
		return
	}
	p.serverPID, p.restarted = pid, [2]int{old, pid}
	p.note = fmt.Sprintf("postmaster pid %d is gone: the server restarted during the step, as pid %d; its new processes are counted from their start, the old ones' CPU since the step began is lost with them", old, pid)
}

// serverAlive says whether the postmaster the step began with still runs:
// its pid is a live process started when the one of the step's first
// snapshot was (a reused pid is another process). Not by its name: under
// Valgrind a process's comm is Valgrind's tool's ("callgrind-amd64"),
// and every counted step's evidence said the postmaster was gone.
func (p *procProbe) serverAlive() bool {
	proc, err := p.fs.Proc(p.serverPID)
	if err != nil {
		return false
	}
	st, err := proc.Stat()
	if err != nil || st.State == "Z" {
		return false
	}
	if p.first != nil {
		if was, ok := p.first.server[p.serverPID]; ok {
			return st.Starttime == was.start
		}
	}
	return st.Comm == "postgres" // no start to compare with
}

func (p *procProbe) report(_ context.Context, _ *stepState, out *result.Probes) error {
	a, b := p.first, p.last
	p.first, p.last = nil, nil
	if a == nil || b == nil {
		return fmt.Errorf("missing a snapshot")
	}
	el := b.at.Sub(a.at).Seconds()
	ps := &result.ProcessStats{CPUs: p.cpus, ServerNote: p.note}
	out.SetProcess(ps)
	if a.hostOK && b.hostOK && el > 0 {
		ps.Host = hostDelta(a.host, b.host)
	}
	if len(a.psi) > 0 && len(b.psi) > 0 && el > 0 {
		share := func(res string, i int) float64 {
			return float64(b.psi[res][i]-a.psi[res][i]) / 1e6 / el
		}
		ps.Host.PSI = &result.PSI{CPUSome: share("cpu", 0), IOSome: share("io", 0), IOFull: share("io", 1), MemorySome: share("memory", 0)}
	}
	// The generator: getrusage covers every thread, exited ones too;
	// schedstat is per thread.
	g := result.ProcGroup{Processes: 1, CPUS: b.genCPU - a.genCPU,
		VoluntaryCtx: b.genVCS - a.genVCS, InvoluntaryCtx: b.genIVCS - a.genIVCS}
	for tid, v := range b.threads {
		w := a.threads[tid]
		if w.start != v.start {
			w = taskSample{} // a new thread, or a new one on a reused tid
		}
		g.OnCPUS += v.run - w.run
		g.RunQueueWaitS += v.wait - w.wait
	}
	ps.Generator = g
	p.lastProbeCPU, p.lastCollectorCPU = map[string]float64{}, 0
	if p.serverPID != 0 && len(b.server) > 0 {
		probes := p.probePIDs()
		srv, probeCPU, coll := groupDelta(a.server, b.server, p.serverPID, probes)
		ps.Server = &srv
		p.lastProbeCPU, p.lastCollectorCPU = probeCPU, coll
	} else if p.serverPID != 0 && p.restarted[0] == 0 {
		ps.ServerNote = fmt.Sprintf("postmaster pid %d is gone", p.serverPID)
	}
	end := b.pooler
	if p.poolerPID != 0 && len(end) == 0 && len(a.pooler) > 0 {
		// The pooler exited during the step: what it used until the last
		// reading of it is what was measured of it.
		p.poolerMu.Lock()
		last := p.poolerLast
		p.poolerMu.Unlock()
		who := fmt.Sprintf("pid %d", p.poolerPID)
		if p.cfg.Server != nil && p.cfg.PoolerPID == 0 { // not --pooler-pid's, which has only its pid
			if pl := p.cfg.Server.Pooler(); pl != nil {
				who = fmt.Sprintf("%s (pid %d)", pl.Program(), p.poolerPID)
			}
		}
		ps.PoolerNote = who + " exited during the step, read last as the step began: its CPU in the step is lost"
		if last != nil {
			end = last.pooler
			ps.PoolerNote = fmt.Sprintf("%s exited during the step: its CPU until %.1f s, when it was read last, is counted", who, last.at.Sub(a.at).Seconds())
		} else {
			end = a.pooler
		}
	}
	if p.poolerPID != 0 && len(end) > 0 {
		pl, _, _ := groupDelta(a.pooler, end, p.poolerPID, nil)
		pl.ByKind = nil
		ps.Pooler = &pl
	}
	return nil
}

// hostDelta turns two /proc/stat totals into shares of the machine.
func hostDelta(a, b procfs.CPUStat) result.HostStat {
	user := (b.User + b.Nice) - (a.User + a.Nice)
	sys := (b.System + b.IRQ + b.SoftIRQ) - (a.System + a.IRQ + a.SoftIRQ)
	idle := b.Idle - a.Idle
	iow := b.Iowait - a.Iowait
	steal := b.Steal - a.Steal
	total := user + sys + idle + iow + steal
	if total <= 0 {
		return result.HostStat{}
	}
	return result.HostStat{BusyShare: (user + sys) / total, UserShare: user / total, SystemShare: sys / total,
		IOWaitShare: iow / total, StealShare: steal / total}
}

// groupDelta accounts a process tree between two snapshots. CPU of
// processes that exited during the window is recovered from the root's
// reaped-children times; their schedstat and context switches are lost.
func groupDelta(a, b map[int]taskSample, root int, probes map[int]string) (g result.ProcGroup, probeCPU map[string]float64, collector float64) {
	probeCPU = map[string]float64{}
	kinds := map[string]*result.ProcGroup{}
	kind := func(k string) *result.ProcGroup {
		if kinds[k] == nil {
			kinds[k] = &result.ProcGroup{Kind: k}
		}
		return kinds[k]
	}
	seen := map[int]bool{}
	for pid, v := range b {
		w, had := a[pid]
		if had && (w.start != v.start || w.kind == KindProbe != (v.kind == KindProbe)) {
			had = false // pid reused
		}
		if !had {
			w = taskSample{}
		}
		seen[pid] = true
		k := v.kind
		if name, ok := probes[pid]; ok {
			k = KindProbe
			probeCPU[name] += v.cpu - w.cpu
		}
		if v.collector {
			collector += v.cpu - w.cpu
		}
		kg := kind(k)
		kg.Processes++
		kg.CPUS += v.cpu - w.cpu
		kg.UserS += v.user - w.user
		kg.SysS += v.sys - w.sys
		kg.OnCPUS += v.run - w.run
		kg.RunQueueWaitS += v.wait - w.wait
		kg.VoluntaryCtx += int64(v.vcs - w.vcs)
		kg.InvoluntaryCtx += int64(v.ivcs - w.ivcs)
	}
	reaped := b[root].children - a[root].children
	for pid, w := range a {
		if !seen[pid] {
			reaped -= w.cpu
			kind(KindExited).Processes++
		}
	}
	if reaped > 0.0005 {
		kind(KindExited).CPUS += reaped
	}
	for _, k := range []string{KindClientBackend, KindBackground, KindProbe, KindExited} {
		kg := kinds[k]
		if kg == nil {
			continue
		}
		g.Processes += kg.Processes
		g.CPUS += kg.CPUS
		g.UserS += kg.UserS
		g.SysS += kg.SysS
		g.OnCPUS += kg.OnCPUS
		g.RunQueueWaitS += kg.RunQueueWaitS
		g.VoluntaryCtx += kg.VoluntaryCtx
		g.InvoluntaryCtx += kg.InvoluntaryCtx
		g.ByKind = append(g.ByKind, *kg)
	}
	return g, probeCPU, collector
}

func (p *procProbe) snapshot() (*procSnap, error) {
	s := &procSnap{at: time.Now(), server: map[int]taskSample{}, pooler: map[int]taskSample{}, threads: map[int]taskSample{}}
	if st, err := p.fs.Stat(); err == nil {
		s.host, s.hostOK = st.CPUTotal, true
	}
	for _, res := range []string{"cpu", "io", "memory"} {
		ps, err := p.fs.PSIStatsForResource(res)
		if err != nil {
			s.psi = nil
			break
		}
		if s.psi == nil {
			s.psi = map[string][2]uint64{}
		}
		var v [2]uint64
		if ps.Some != nil {
			v[0] = ps.Some.Total
		}
		if ps.Full != nil {
			v[1] = ps.Full.Total
		}
		s.psi[res] = v
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return nil, fmt.Errorf("getrusage: %w", err)
	}
	s.genCPU = tv(ru.Utime) + tv(ru.Stime)
	s.genVCS, s.genIVCS = ru.Nvcsw, ru.Nivcsw
	if threads, err := p.fs.AllThreads(os.Getpid()); err == nil {
		for _, t := range threads {
			st, err := t.Stat()
			if err != nil {
				continue
			}
			if ss, err := t.Schedstat(); err == nil {
				s.threads[t.PID] = taskSample{start: st.Starttime,
					run: float64(ss.RunningNanoseconds) / 1e9, wait: float64(ss.WaitingNanoseconds) / 1e9}
			}
		}
	}
	if p.serverPID == 0 && p.poolerPID == 0 {
		return s, nil
	}
	procs, poolerTree, err := p.candidates()
	if err != nil {
		return nil, err
	}
	for _, proc := range procs {
		st, err := proc.Stat()
		if err != nil {
			continue
		}
		var into map[int]taskSample
		switch {
		case p.serverPID != 0 && (st.PID == p.serverPID || st.PPID == p.serverPID):
			into = s.server
		case p.poolerPID != 0 && (st.PID == p.poolerPID || poolerTree[st.PID]):
			into = s.pooler
		default:
			continue
		}
		if st.State == "Z" {
			continue // exited, not yet reaped: counted once it is
		}
		ts, ok := p.task(proc, st)
		if !ok {
			continue
		}
		into[st.PID] = ts
	}
	return s, nil
}

// task reads one process's counters; false when it went in the middle. A
// process that exits between these reads is left out whole, as if it had
// gone before the snapshot: a sample with some counters read as zero would
// make the step's deltas negative.
func (p *procProbe) task(proc procfs.Proc, st procfs.ProcStat) (taskSample, bool) {
	ts := taskSample{kind: KindBackground, start: st.Starttime, cpu: float64(st.UTime+st.STime) / userHZ,
		user: float64(st.UTime) / userHZ, sys: float64(st.STime) / userHZ}
	if st.PID == p.serverPID || st.PID == p.poolerPID {
		ts.children = float64(st.CUTime+st.CSTime) / userHZ
	} else if st.PPID == p.serverPID {
		cl, err := proc.CmdLine()
		if err != nil {
			return ts, false // gone: its CPU will show in the postmaster's reaped children
		}
		title := strings.Join(cl, " ")
		ts.kind = backendKind(title)
		if p.isClient(st.PID) {
			ts.kind = KindClientBackend
		}
		ts.collector = strings.Contains(title, "pg_wait_sampling collector")
	}
	ss, err := proc.Schedstat()
	if err != nil {
		return ts, false
	}
	ts.run, ts.wait = float64(ss.RunningNanoseconds)/1e9, float64(ss.WaitingNanoseconds)/1e9
	status, err := proc.NewStatus()
	if err != nil {
		return ts, false
	}
	ts.vcs, ts.ivcs = status.VoluntaryCtxtSwitches, status.NonVoluntaryCtxtSwitches
	return ts, true
}

// candidates lists the processes that may belong to the server or the
// pooler: the server's root and its children, the pooler's root and its
// whole tree (a proxy's program may be a shell's child, and fork workers
// of its own), from /proc/PID/task/TID/children when the kernel has it
// (cheap), else every process. poolerTree holds the pooler's
// descendants.
func (p *procProbe) candidates() (_ procfs.Procs, poolerTree map[int]bool, _ error) {
	var out procfs.Procs
	poolerTree = map[int]bool{}
	for _, root := range []int{p.serverPID, p.poolerPID} {
		if root == 0 {
			continue
		}
		kids, ok := children(root)
		if !ok {
			all, err := p.fs.AllProcs()
			if err != nil {
				return nil, nil, fmt.Errorf("list processes: %w", err)
			}
			if p.poolerPID != 0 {
				parent := map[int]int{}
				for _, pr := range all {
					if st, err := pr.Stat(); err == nil {
						parent[st.PID] = st.PPID
					}
				}
				for pid := range parent {
					for a, n := parent[pid], 0; a > 1 && n < 64; a, n = parent[a], n+1 {
						if a == p.poolerPID {
							poolerTree[pid] = true
							break
						}
					}
				}
			}
			return all, poolerTree, nil
		}
		if root == p.poolerPID {
			kids = descendants(root)
			for _, k := range kids {
				poolerTree[k] = true
			}
		}
		for _, pid := range append([]int{root}, kids...) {
			if proc, err := p.fs.Proc(pid); err == nil {
				out = append(out, proc)
			}
		}
	}
	return out, poolerTree, nil
}

// descendants lists every process below pid: its children, theirs, and
// so on.
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 && len(out) < 100000 {
		kids, _ := children(queue[0])
		queue = append(queue[1:], kids...)
		out = append(out, kids...)
	}
	return out
}

// children reads a process's children from every one of its threads'
// /proc/PID/task/TID/children; false when the kernel does not provide it.
func children(pid int) ([]int, bool) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, false
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			return nil, false
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out, true
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// backendKind classifies a server process by its title: client backends
// show "user database host activity", the host being "[local]" or
// "address(port)"; every other process (auxiliary processes, background
// workers, WAL senders) is background.
func backendKind(title string) string {
	rest, ok := strings.CutPrefix(title, "postgres: ")
	if !ok {
		return KindBackground
	}
	f := strings.Fields(rest)
	if len(f) > 0 && strings.HasSuffix(f[0], ":") { // cluster_name prefix
		f = f[1:]
	}
	if len(f) < 3 || f[0] == "walsender" {
		return KindBackground
	}
	if h := f[2]; h == "[local]" || (strings.Contains(h, "(") && strings.HasSuffix(h, ")")) {
		return KindClientBackend
	}
	return KindBackground
}

func init() { register(processDef) }

var processDef = def{
	id: probeid.Process, on: true, flag: "no-process-probe",
	evidence: "process accounting (CPU, run-queue wait, context switches from /proc)",
	flags: func(fs *pflag.FlagSet, o *Options) {
		fs.IntVar(&o.PoolerPID, "pooler-pid", 0, "pid of a pooler on this host to account apart from server and client")
	},
	open: func(ctx context.Context, cfg Config, s *Set) (probe, error) {
		p, err := newProcProbe(ctx, cfg)
		if err != nil {
			return nil, err
		}
		s.proc = p
		return p, nil
	},
}
