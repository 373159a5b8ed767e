package engine

import (
	"bytes"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/sys/unix"
)

// pins is the step's record of the threads clients pinned to a CPU
// (Config.Colocate), so that every one gets the process's CPUs back when
// the step ends, whichever goroutine it runs by then.
type pins struct {
	mu   sync.Mutex
	all  unix.CPUSet // the CPUs the process may use
	tids map[int]bool
}

// processCPUs is the CPU set the process started with (taskset, cgroups),
// read before any client could have pinned the thread that reads it.
var processCPUs, processCPUsErr = func() (s unix.CPUSet, err error) {
	err = unix.SchedGetaffinity(0, &s)
	return s, err
}()

func newPins() *pins {
	if processCPUsErr != nil {
		return nil
	}
	return &pins{tids: map[int]bool{}, all: processCPUs}
}

func (p *pins) add(tid int) {
	p.mu.Lock()
	p.tids[tid] = true
	p.mu.Unlock()
}

// pinning counts the steps of the process whose clients may be pinning
// threads now (an agent can run several at once).
var pinning struct {
	sync.Mutex
	steps int
}

// begin is called before the step's clients run.
func (p *pins) begin() {
	pinning.Lock()
	pinning.steps++
	pinning.Unlock()
}

// restore gives every pinned thread the process's CPUs back, and when no
// other step is pinning, every thread of the process: a thread the runtime
// starts from a pinned one (a new M for the Ps the step added, a hand-off
// in a system call) inherits its single CPU, and no client recorded it.
func (p *pins) restore() {
	p.mu.Lock()
	for tid := range p.tids {
		_ = unix.SchedSetaffinity(tid, &p.all) // a thread that has exited needs nothing
	}
	clear(p.tids)
	p.mu.Unlock()

	pinning.Lock()
	defer pinning.Unlock()
	if pinning.steps--; pinning.steps > 0 {
		return
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		var s unix.CPUSet
		if unix.SchedGetaffinity(tid, &s) == nil && s != p.all {
			_ = unix.SchedSetaffinity(tid, &p.all)
		}
	}
}

// follower moves a client's OS thread to the CPU its backend last ran on,
// read from the backend's /proc/PID/stat (kept open and re-read).
type follower struct {
	pid    uint32 // the backend followed (0: none yet)
	fd     int    // its stat file; -1 when it is not a local postgres process
	cpu    int    // the CPU pinned to, on thread tid
	tid    int
	pinned bool // pinned at least once in the step
	buf    [1024]byte
}

// follow pins the current thread to the CPU of the current connection's
// backend if that has changed (a new backend, a new CPU, another thread).
// Cheap enough to call every rawYield: one pread of the stat file, and a
// sched_setaffinity only when something moved.
func (c *client) follow() {
	f := &c.fol
	if c.conn == nil {
		return
	}
	if pid := c.conn.PID(); pid != f.pid {
		f.open(pid, c.conn)
	}
	if f.fd < 0 {
		return
	}
	cpu := f.backendCPU()
	if cpu < 0 || !c.e.pins.all.IsSet(cpu) {
		return
	}
	// Locked, so that the thread pinned is the thread recorded: between
	// gettid and sched_setaffinity the runtime may otherwise move the
	// goroutine (a preemption, a GC stack scan), and the thread pinned
	// would never get the process's CPUs back (a CI run saw one).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	if cpu == f.cpu && tid == f.tid {
		return
	}
	var set unix.CPUSet
	set.Set(cpu)
	if unix.SchedSetaffinity(0, &set) == nil {
		c.e.pins.add(tid)
		f.cpu, f.tid, f.pinned = cpu, tid, true
	}
}

// open starts following backend pid, when the connection is local (a unix
// socket or loopback) and the process is a postgres one: a PID from a
// server elsewhere, or from a pooler, names no process to follow here.
func (f *follower) open(pid uint32, conn *pgconn.PgConn) {
	f.close()
	f.pid, f.cpu, f.tid = pid, -1, 0
	if !localAddr(conn.Conn().RemoteAddr()) {
		return
	}
	fd, err := unix.Open("/proc/"+strconv.FormatUint(uint64(pid), 10)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f.fd = fd
	if n, err := unix.Pread(fd, f.buf[:], 0); err != nil || !bytes.Contains(f.buf[:n], []byte(" (postgres) ")) {
		f.close()
	}
}

func (f *follower) close() {
	if f.fd >= 0 {
		unix.Close(f.fd)
	}
	f.fd = -1
}

func localAddr(a net.Addr) bool {
	switch a := a.(type) {
	case *net.UnixAddr:
		return true
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	}
	return false
}

// backendCPU is the "processor" field (the 39th) of the backend's stat
// line, or -1.
func (f *follower) backendCPU() int {
	n, err := unix.Pread(f.fd, f.buf[:], 0)
	if err != nil || n <= 0 {
		return -1
	}
	b := f.buf[:n]
	i := bytes.LastIndexByte(b, ')') // the command may hold spaces and parentheses
	if i < 0 {
		return -1
	}
	field, cpu, in := 2, 0, false // the state after ")" is field 3
	for _, ch := range b[i+1:] {
		if ch == ' ' {
			if in && field == 39 {
				return cpu
			}
			in = false
			continue
		}
		if !in {
			in, field = true, field+1
		}
		if field == 39 {
			if ch < '0' || ch > '9' {
				return -1
			}
			cpu = cpu*10 + int(ch-'0')
		}
	}
	return -1
}
