package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// blockingConn is a net.Conn whose Read and Write are plain blocking system
// calls on the socket: a client's goroutine sleeps in read(2) until the server
// answers. Go's netpoller instead first gets EAGAIN, parks the goroutine and
// is woken by epoll, about twice the system calls and scheduler work per
// round trip; with load generator and server sharing the cores, that CPU
// comes straight out of the server's throughput (see the README's benchmark).
//
// Deadlines are honoured for what pgconn needs them for (interrupting a
// read on cancellation or close): when a deadline passes the socket is shut
// down, which wakes a blocked read or write; the connection is unusable
// afterwards. Reads and writes hold a read lock so the descriptor cannot be
// closed (and its number reused) under them.
type blockingConn struct {
	fd            int
	local, remote net.Addr

	mu      sync.RWMutex // held shared by Read/Write during the system call, exclusively by close
	stateMu sync.Mutex   // guards closed, and the descriptor's validity for shutdown and close
	closed  bool
	dlMu    sync.Mutex // guards timer
	timer   *time.Timer
	expired atomic.Bool
}

// dialBlocking dials like net.Dialer and returns the connection as a
// blockingConn: the descriptor is duplicated, switched to blocking mode, and
// the netpoller's copy closed.
func dialBlocking(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
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
	if err := raw.Control(func(s uintptr) { fd, dupErr = syscall.Dup(int(s)) }); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, os.NewSyscallError("dup", dupErr)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	tv := unix.NsecToTimeval(rawWindow.Nanoseconds())
	for _, opt := range []int{unix.SO_RCVTIMEO, unix.SO_SNDTIMEO} {
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, opt, &tv); err != nil {
			syscall.Close(fd)
			return nil, os.NewSyscallError("setsockopt", err)
		}
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true) // already Go's default; the option lives on the shared socket
	}
	return &blockingConn{fd: fd, local: nc.LocalAddr(), remote: nc.RemoteAddr()}, nil
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// rawWindow is how long a read or write may block inside a raw system call
// (one the Go scheduler does not see) before it falls back to waiting in
// poll(2) as an ordinary system call. A raw call keeps the goroutine on its
// P: no hand-off, no wake-up of the runtime's monitor thread, about a fifth
// of the load generator's CPU per round trip at 2 clients here. But a
// garbage-collector stop has to wait for it, so the window bounds that wait.
const rawWindow = 2 * time.Millisecond

func (c *blockingConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		if c.isExpired() {
			return 0, timeoutError{}
		}
		switch e {
		case 0:
			if n == 0 {
				return 0, io.EOF
			}
			return int(n), nil
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			// No answer within the raw window: wait as a proper system call.
			if err := c.wait(unix.POLLIN); err != nil {
				return 0, err
			}
			continue
		default:
			return 0, &net.OpError{Op: "read", Net: c.remote.Network(), Addr: c.remote, Err: os.NewSyscallError("read", e)}
		}
	}
}

func (c *blockingConn) Write(b []byte) (int, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	written := 0
	for written < len(b) {
		if c.isExpired() {
			return written, timeoutError{}
		}
		rest := b[written:]
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(c.fd), uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
		switch e {
		case 0:
			written += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			if err := c.wait(unix.POLLOUT); err != nil {
				return written, err
			}
		default:
			return written, &net.OpError{Op: "write", Net: c.remote.Network(), Addr: c.remote, Err: os.NewSyscallError("write", e)}
		}
	}
	return written, nil
}

// wait blocks in poll(2) until the socket is ready for events.
func (c *blockingConn) wait(events int16) error {
	fds := [1]unix.PollFd{{Fd: int32(c.fd), Events: events}}
	for {
		_, err := unix.Poll(fds[:], -1)
		if c.isExpired() {
			return timeoutError{}
		}
		if err == nil || err != unix.EINTR {
			return nil // errors (HUP, ERR) show in the read or write that follows
		}
	}
}

// Close shuts the socket down (waking any blocked Read or Write), waits for
// them to return, and closes the descriptor. The descriptor is only ever
// shut down or closed under stateMu while it is still open, so a number the
// kernel has since given to another socket is never touched.
func (c *blockingConn) Close() error {
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
	return syscall.Close(c.fd)
}

// shutdown shuts the socket down if it is still open, and says whether it was.
func (c *blockingConn) shutdown() bool {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	if c.closed {
		return false
	}
	_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	return true
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

func (c *blockingConn) isExpired() bool { return c.expired.Load() }

// expire marks the deadline passed and shuts the socket down.
func (c *blockingConn) expire() {
	c.expired.Store(true)
	c.shutdown()
}

func (c *blockingConn) SetDeadline(t time.Time) error {
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
		c.expired.Store(true)
		c.shutdown()
		return nil
	}
	c.timer = time.AfterFunc(d, c.expire)
	return nil
}

func (c *blockingConn) SetReadDeadline(t time.Time) error  { return c.SetDeadline(t) }
func (c *blockingConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }
