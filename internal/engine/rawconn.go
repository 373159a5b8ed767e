package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawConn is a net.Conn that waits for the server the way pgbench does —
// poll(2) on the socket, recv(2) and send(2) — with all made as raw system calls
// the Go scheduler does not see, so the client goroutine keeps its P: no
// hand-off, no wake-up of the runtime's monitor thread, no netpoller.
//
// Why each part (measured here, select-only prepared; docs/engine.md):
//   - Go's netpoller reads first, gets EAGAIN, parks the goroutine and is
//     woken by epoll: about twice pgbench's system calls and scheduler work.
//   - A plain blocking read(2) on a unix socket wakes the client about 1.4
//     times per round trip; poll-then-read wakes it once, like pgbench.
//   - Ordinary (non-raw) system calls let the runtime hand the P off while
//     the client waits, which costs a thread wake-up per round trip.
//   - send and recv, as libpq uses, skip the file layer that write(2) and
//     read(2) go through: a send, a receive and a receive that finds
//     nothing cost 2.24 µs against 2.47 µs with write and read here
//     (BenchmarkSocketCalls), about 0.15 µs of a transaction's 8-9 µs.
//   - Whether to read or to wait first depends on where the server runs:
//     with one client the answer is never there yet (a read first is
//     wasted); with more clients than cores the client is usually
//     preempted as it sends and the answer is there when it reads (a wait
//     first is wasted). Read learns which from the last answers.
//
// A raw wait does not hold up a garbage-collector stop: to stop the world
// the runtime signals every thread it believes is running Go code (SIGURG,
// its asynchronous preemption), the signal interrupts ppoll with EINTR, and
// the wait continues in an ordinary poll(2) the runtime knows about. So the
// raw wait has no timeout — arming a timer for every round trip cost about a
// fifth of the client's CPU here. With asynchronous preemption turned off
// (GODEBUG=asyncpreemptoff=1) no signal comes, and a raw wait lasts at most
// rawWindow before it continues in poll(2).
//
// Deadlines are honoured for what pgconn needs them for — interrupting a
// wait on cancellation or close: when a deadline passes the socket is shut
// down, which wakes the poll; the connection is unusable afterwards.
type rawConn struct {
	fd            int
	local, remote net.Addr
	full          bool  // the last read filled the buffer: more may be waiting
	ready         int8  // saturating count (0..readyMax) of answers found there on reading first
	probe         uint8 // reads since the last read-first probe while ready < readyGuess

	mu      sync.RWMutex // held shared by Read/Write during system calls, exclusively by Close
	stateMu sync.Mutex   // guards closed, and the descriptor's validity for shutdown and close
	closed  bool
	dlMu    sync.Mutex // guards timer
	timer   *time.Timer
	expired atomic.Bool
}

// Reading first costs a wasted recv(2) when the answer is not there yet
// (0.37 µs here); waiting first costs a wasted ppoll(2) when it is (0.48 µs;
// BenchmarkSocketCalls). A client reads first while ready ≥ readyGuess,
// and otherwise every probeEvery-th read, to notice when answers start to
// come before it looks.
const (
	readyMax   = 3
	readyGuess = 2
	probeEvery = 8
)

// rawYield is how long a client with raw I/O runs before it yields its P
// (between transactions). Under the runtime's 10 ms preemption, so the
// runtime never needs to signal a client to take its P; short enough that
// the collector and timers, which have no P of their own unless there are
// companions (Config.Companions), wait little for one.
const rawYield = 5 * time.Millisecond

// goyield is the runtime's yield to the current P's own run queue: the
// goroutines this P readied (the collector when its timer fires here, a
// probe) run first, then the client, on the same thread. runtime.Gosched
// puts the client on the global run queue instead, from which the next P
// to yield takes it whenever this P is busy for a moment, and the client
// moves to another OS thread. Each move breaks the pairing the kernel keeps
// between a client thread and its backend on one CPU, and a split pair pays
// a cross-CPU wake-up per round trip (docs/engine.md). At 8 clients
// on 2 cores, 8 s runs: 132-214 moves with probes and 53-60 without when
// every yield was a Gosched; 15-36 and 4-7 now (with globalEvery, and no
// garbage collection in the step). The runtime keeps this name for the
// programs that link to it (Go issue 67401); were it removed, the build
// would fail, not the engine.
//
//go:linkname goyield runtime.goyield
func goyield()

// globalEvery: every globalEvery-th yield goes through the global run queue
// (runtime.Gosched) after all, when no P is spare. A P whose own queue is
// never empty looks at the global one only every 61st time it schedules,
// so with goyield alone a goroutine readied there (by the netpoller: a
// probe, a client dialling) waited up to 61 yields, 300 ms, for a P. With
// companions (Config.Companions) their Ps serve the global queue, and a
// Gosched would only wake one of their threads to look for work (which is
// what a spare P cost when every yield was a Gosched: 64.8 k against
// 72.1 k tps at 8 clients, bench/README.md).
const globalEvery = 4

// yieldRaw yields the P of a raw client for the n-th time (counting from
// 1); spare says Ps other than the clients' serve the global run queue.
func yieldRaw(n int, spare bool) {
	if !spare && n%globalEvery == 0 {
		runtime.Gosched()
	} else {
		goyield()
	}
}

// rawWindow bounds a raw wait when the runtime does not preempt with
// signals, and so how long a garbage-collector stop can be held up by a
// client waiting for the server.
const rawWindow = 2 * time.Millisecond

// rawTimed says raw waits need a timeout: asynchronous preemption is off.
var rawTimed = strings.Contains(","+os.Getenv("GODEBUG")+",", ",asyncpreemptoff=1,")

// dialRaw dials like net.Dialer and returns the connection as a rawConn:
// the descriptor is duplicated (it stays non-blocking) and the netpoller's
// copy closed, which removes it from the runtime's epoll set.
func dialRaw(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, errors.New("connection has no file descriptor")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var dupErr error
	if err := raw.Control(func(s uintptr) { fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, os.NewSyscallError("dup", dupErr)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	return &rawConn{fd: fd, local: nc.LocalAddr(), remote: nc.RemoteAddr()}, nil
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

var rawTimeout = unix.NsecToTimespec(rawWindow.Nanoseconds())

// wait blocks until the socket is ready for events: a raw poll until a
// signal interrupts it (or for up to rawWindow when rawTimed), then an
// ordinary one.
func (c *rawConn) wait(events int16) error {
	fds := [1]unix.PollFd{{Fd: int32(c.fd), Events: events}}
	ts := rawTimeout // ppoll writes the time left back into it
	var tsp uintptr  // no timeout
	if rawTimed {
		tsp = uintptr(unsafe.Pointer(&ts))
	}
	n, _, e := syscall.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1, tsp, 0, 0, 0)
	for e == syscall.EINTR || (e == 0 && n == 0) {
		if c.expired.Load() {
			return timeoutError{}
		}
		var err error
		nn, err := unix.Poll(fds[:], -1)
		n, e = uintptr(nn), errnoOf(err)
	}
	if c.expired.Load() {
		return timeoutError{}
	}
	return nil // readiness, hang-up and errors all show in the read or write that follows
}

func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

func (c *rawConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	// Read first when the answer is probably there already: the last read
	// filled the buffer, or recent answers were there before the client
	// looked (many clients on few cores, where the client is preempted as it
	// sends). Otherwise wait first. (pgbench always reads first, so it pays
	// an extra read when the answer is not there yet.)
	polled, guess := false, false
	if !c.full {
		guess = c.ready >= readyGuess
		if !guess {
			c.probe++
			guess = c.probe%probeEvery == 0
		}
		if !guess {
			if err := c.wait(unix.POLLIN); err != nil {
				return 0, err
			}
			polled = true
		}
	}
	for {
		n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0, 0, 0)
		if c.expired.Load() {
			return 0, timeoutError{}
		}
		switch e {
		case 0:
			if n == 0 {
				return 0, io.EOF
			}
			if guess {
				c.ready = min(c.ready+1, readyMax)
			}
			c.full = int(n) == len(b)
			return int(n), nil
		case syscall.EINTR:
		case syscall.EAGAIN:
			if guess {
				c.ready = max(c.ready-1, 0)
				guess = false
			}
			if polled && c.full {
				c.full = false
			}
			if err := c.wait(unix.POLLIN); err != nil {
				return 0, err
			}
			polled = true
		default:
			return 0, &net.OpError{Op: "read", Net: c.remote.Network(), Addr: c.remote, Err: os.NewSyscallError("recvfrom", e)}
		}
	}
}

func (c *rawConn) Write(b []byte) (int, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	written := 0
	for written < len(b) {
		if c.expired.Load() {
			return written, timeoutError{}
		}
		rest := b[written:]
		n, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, uintptr(c.fd), uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)), unix.MSG_NOSIGNAL, 0, 0)
		switch e {
		case 0:
			written += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			if err := c.wait(unix.POLLOUT); err != nil {
				return written, err
			}
		default:
			return written, &net.OpError{Op: "write", Net: c.remote.Network(), Addr: c.remote, Err: os.NewSyscallError("sendto", e)}
		}
	}
	return written, nil
}

// Close shuts the socket down (waking any blocked Read or Write), waits for
// them to return, and closes the descriptor. The descriptor is only ever
// shut down or closed under stateMu while it is still open, so a number the
// kernel has since given to another socket is never touched.
func (c *rawConn) Close() error {
	c.dlMu.Lock()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.dlMu.Unlock()
	if !c.shutdown() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	return unix.Close(c.fd)
}

// shutdown shuts the socket down if it is still open, and says whether it was.
func (c *rawConn) shutdown() bool {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	if c.closed {
		return false
	}
	_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
	return true
}

func (c *rawConn) LocalAddr() net.Addr  { return c.local }
func (c *rawConn) RemoteAddr() net.Addr { return c.remote }

// expire marks the deadline passed and shuts the socket down.
func (c *rawConn) expire() {
	c.expired.Store(true)
	c.shutdown()
}

func (c *rawConn) SetDeadline(t time.Time) error {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if t.IsZero() || c.expired.Load() {
		return nil
	}
	d := time.Until(t)
	if d <= 0 {
		c.expire()
		return nil
	}
	c.timer = time.AfterFunc(d, c.expire)
	return nil
}

func (c *rawConn) SetReadDeadline(t time.Time) error  { return c.SetDeadline(t) }
func (c *rawConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }
