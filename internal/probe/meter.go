package probe

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// Meter keys: the counters a Meter reads, cumulative since the meter began.
const (
	MeterServerCPU  = "server_cpu_s"  // on-CPU time of the server's processes (schedstat, ns precision)
	MeterServerUser = "server_user_s" // their user time (stat, clock ticks)
	MeterServerSys  = "server_sys_s"  // their kernel time (stat, clock ticks)
	MeterServerCtx  = "server_ctx"    // times they were scheduled in: context switches
	MeterPoolerCPU  = "pooler_cpu_s"  // on-CPU time of a pooler's processes
	MeterPoolerCtx  = "pooler_ctx"    // times a pooler's processes were scheduled in
	// MeterHostSteal is the machine's steal time, summed over its CPUs
	// (/proc/stat): what the hypervisor ran elsewhere while this guest
	// wanted to run.
	MeterHostSteal = "host_steal_s"
)

// Meter reads what a server's processes (the postmaster and its children)
// and a pooler's have cost so far, cheaply enough to read at every slice
// edge of an A/B run in slices: two small /proc files per process. Its
// counters never go back: a process that exits keeps what it was last
// seen to have used, and a pid reused by a new process starts from zero.
type Meter struct {
	fs        procfs.FS
	serverPID int
	poolerPID int
	seen      map[int]meterTask
	carry     map[string]float64 // what exited processes had used
	// files keeps each process's stat and schedstat open, read again
	// from offset 0 at every read: half the system calls of opening them.
	files map[int]*taskFiles
	buf   []byte
	stat  *os.File // /proc/stat, for the machine's steal time
}

// taskFiles are one process's open /proc files.
type taskFiles struct{ stat, sched *os.File }

func (f *taskFiles) close() {
	f.stat.Close()
	f.sched.Close()
}

type meterTask struct {
	start  uint64 // start time in clock ticks after boot: tells a reused pid
	pooler bool
	vals   [4]float64 // cpu, user, sys, ctx
}

// NewMeter returns a meter of the server whose postmaster is serverPID
// (found from a connection when 0, as the process probe finds it) and of
// the pooler poolerPID (0: none). It fails when the server's processes are
// not visible on this host.
func NewMeter(ctx context.Context, cfg Config) (*Meter, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, fmt.Errorf("no /proc: %w", err)
	}
	pid := 0
	if cfg.Server.Ephemeral() {
		pid = cfg.Server.PID()
	}
	if pid == 0 {
		var note string
		if pid, note = findServer(ctx, fs, cfg); pid == 0 {
			return nil, fmt.Errorf("%s", note)
		}
	}
	m := &Meter{fs: fs, serverPID: pid, poolerPID: cfg.poolerPID(), seen: map[int]meterTask{}, carry: map[string]float64{},
		files: map[int]*taskFiles{}, buf: make([]byte, 1024)}
	m.Read()
	return m, nil
}

// Read returns the cumulative counters (the Meter* keys).
func (m *Meter) Read() map[string]float64 {
	now := map[int]meterTask{}
	for _, root := range []struct {
		pid    int
		pooler bool
	}{{m.serverPID, false}, {m.poolerPID, true}} {
		if root.pid == 0 {
			continue
		}
		pids := []int{root.pid}
		if root.pooler {
			pids = append(pids, descendants(root.pid)...) // a proxy's whole tree
		} else if kids, ok := children(root.pid); ok {
			pids = append(pids, kids...)
		}
		for _, pid := range pids {
			if t, ok := m.task(pid, root.pooler); ok {
				now[pid] = t
			}
		}
	}
	for pid, old := range m.seen {
		if t, ok := now[pid]; !ok || t.start != old.start {
			m.add(old, 1) // exited (or its pid reused): keep what it used
		}
	}
	for pid, f := range m.files {
		if _, ok := now[pid]; !ok {
			f.close()
			delete(m.files, pid)
		}
	}
	m.seen = now
	out := map[string]float64{}
	if steal, ok := m.steal(); ok {
		out[MeterHostSteal] = steal
	}
	for k, v := range m.carry {
		out[k] = v
	}
	for _, t := range now {
		keys := meterKeys(t.pooler)
		for i, k := range keys {
			if k != "" {
				out[k] += t.vals[i]
			}
		}
	}
	return out
}

func (m *Meter) add(t meterTask, sign float64) {
	for i, k := range meterKeys(t.pooler) {
		if k != "" {
			m.carry[k] += sign * t.vals[i]
		}
	}
}

func meterKeys(pooler bool) [4]string {
	if pooler {
		return [4]string{MeterPoolerCPU, "", "", MeterPoolerCtx}
	}
	return [4]string{MeterServerCPU, MeterServerUser, MeterServerSys, MeterServerCtx}
}

// steal reads the machine's steal time so far from /proc/stat's first
// line ("cpu user nice system idle iowait irq softirq steal ..."), in
// seconds summed over the CPUs.
func (m *Meter) steal() (float64, bool) {
	if m.stat == nil {
		f, err := os.Open("/proc/stat")
		if err != nil {
			return 0, false
		}
		m.stat = f
	}
	n, err := m.stat.ReadAt(m.buf, 0)
	if n == 0 && err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(m.buf[:n]), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	v, err := strconv.ParseUint(f[8], 10, 64)
	return float64(v) / userHZ, err == nil
}

// Close releases the files the meter keeps open.
func (m *Meter) Close() {
	if m.stat != nil {
		m.stat.Close()
		m.stat = nil
	}
	for pid, f := range m.files {
		f.close()
		delete(m.files, pid)
	}
}

// read reads a /proc file of pid again from its start.
func (m *Meter) read(pid int, sched bool) ([]byte, bool) {
	f := m.files[pid]
	if f == nil {
		dir := "/proc/" + strconv.Itoa(pid) + "/"
		st, err := os.Open(dir + "stat")
		if err != nil {
			return nil, false
		}
		sc, err := os.Open(dir + "schedstat")
		if err != nil {
			st.Close()
			return nil, false
		}
		f = &taskFiles{stat: st, sched: sc}
		m.files[pid] = f
	}
	file := f.stat
	if sched {
		file = f.sched
	}
	n, err := file.ReadAt(m.buf, 0)
	if n == 0 && err != nil {
		f.close()
		delete(m.files, pid)
		return nil, false
	}
	return m.buf[:n], true
}

// task reads one process: stat for its start and user/kernel ticks,
// schedstat for its on-CPU time and the times it was scheduled in.
func (m *Meter) task(pid int, pooler bool) (meterTask, bool) {
	stat, ok := m.read(pid, false)
	if !ok {
		return meterTask{}, false
	}
	// The fields after the command, which is in parentheses and may hold
	// spaces: state is field 3; utime 14, stime 15, starttime 22.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return meterTask{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "Z" {
		return meterTask{}, false
	}
	utime, _ := strconv.ParseUint(f[11], 10, 64)
	stime, _ := strconv.ParseUint(f[12], 10, 64)
	start, _ := strconv.ParseUint(f[19], 10, 64)
	sched, ok := m.read(pid, true)
	if !ok {
		return meterTask{}, false
	}
	sf := strings.Fields(string(sched))
	if len(sf) < 3 {
		return meterTask{}, false
	}
	run, _ := strconv.ParseUint(sf[0], 10, 64)
	slices, _ := strconv.ParseUint(sf[2], 10, 64)
	return meterTask{start: start, pooler: pooler,
		vals: [4]float64{float64(run) / 1e9, float64(utime) / userHZ, float64(stime) / userHZ, float64(slices)}}, true
}
