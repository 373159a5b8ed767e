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
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true) // already Go's default; the option lives on the shared socket
	}
	return &blockingConn{fd: fd, local: nc.LocalAddr(), remote: nc.RemoteAddr()}, nil
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

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
		n, err := syscall.Read(c.fd, b)
		if err == syscall.EINTR {
			continue
		}
		if c.isExpired() {
			return max(n, 0), timeoutError{}
		}
		if err != nil {
			return 0, &net.OpError{Op: "read", Net: c.remote.Network(), Addr: c.remote, Err: os.NewSyscallError("read", err)}
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
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
		n, err := syscall.Write(c.fd, b[written:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return written, &net.OpError{Op: "write", Net: c.remote.Network(), Addr: c.remote, Err: os.NewSyscallError("write", err)}
		}
		written += n
	}
	return written, nil
}

// Close shuts the socket down (waking any blocked Read or Write), waits for
// them to return, and closes the descriptor.
func (c *blockingConn) Close() error {
	c.dlMu.Lock()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.dlMu.Unlock()
	_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	return syscall.Close(c.fd)
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

func (c *blockingConn) isExpired() bool { return c.expired.Load() }

// expire marks the deadline passed and shuts the socket down.
func (c *blockingConn) expire() {
	c.expired.Store(true)
	_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
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
		_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
		return nil
	}
	c.timer = time.AfterFunc(d, c.expire)
	return nil
}

func (c *blockingConn) SetReadDeadline(t time.Time) error  { return c.SetDeadline(t) }
func (c *blockingConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }
