package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pollConn is the netpoller's connection (deadlines, Close, and the wait
// for readiness all stay Go's) with its reads and writes made as raw
// recv(2) and send(2) on the non-blocking socket. Go's own reads and writes
// enter the scheduler's system-call state, and the runtime's monitor
// thread takes the P of any client it finds in one for two of its looks
// in a row; with thousands of clients some client always is, so the
// monitor never slows down: it woke every 20 µs, handed Ps to other threads
// and took 7 % of the load generator's CPU at 2 500 clients through
// pgbouncer (perf). A non-blocking call returns at once, so nothing is held
// up by making it raw.
type pollConn struct {
	net.Conn // the dialled connection
	rc       syscall.RawConn

	// The calls rc.Read and rc.Write make, bound once: a closure made per
	// call would be garbage per transaction. A connection has one reader
	// and one writer at a time, so each side's arguments and results live
	// here.
	readFn, writeFn func(fd uintptr) bool
	rb, wb          []byte
	rn, wn          int
	rerr, werr      syscall.Errno
}

// dialPoll dials like net.Dialer and wraps the connection as a pollConn.
func dialPoll(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nc, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		nc.Close()
		return nil, err
	}
	c := &pollConn{Conn: nc, rc: rc}
	c.readFn, c.writeFn = c.recv, c.send
	return c, nil
}

func (c *pollConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.rb, c.rn, c.rerr = b, 0, 0
	err := c.rc.Read(c.readFn)
	c.rb = nil
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case c.rerr != 0:
		return 0, c.opError("read", os.NewSyscallError("recvfrom", c.rerr))
	case c.rn == 0:
		return 0, io.EOF
	}
	return c.rn, nil
}

// recv is one try at reading into c.rb; false: wait for the socket in the
// netpoller and try again.
func (c *pollConn) recv(fd uintptr) bool {
	for {
		r, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&c.rb[0])), uintptr(len(c.rb)), 0, 0, 0)
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.rn, c.rerr = int(r), e
		return true
	}
}

func (c *pollConn) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.wb, c.wn, c.werr = b, 0, 0
	err := c.rc.Write(c.writeFn)
	c.wb = nil
	switch {
	case err != nil:
		return c.wn, c.opError("write", err)
	case c.werr != 0:
		return c.wn, c.opError("write", os.NewSyscallError("sendto", c.werr))
	}
	return c.wn, nil
}

// send writes what is left of c.wb; false: wait until the socket takes
// more.
func (c *pollConn) send(fd uintptr) bool {
	for c.wn < len(c.wb) {
		rest := c.wb[c.wn:]
		r, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)), unix.MSG_NOSIGNAL, 0, 0)
		switch e {
		case 0:
			c.wn += int(r)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			c.werr = e
			return true
		}
	}
	return true
}

// opError wraps err as net.Conn's own errors are, so that a passed
// deadline still says Timeout() and a closed connection net.ErrClosed.
func (c *pollConn) opError(op string, err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return err
	}
	return &net.OpError{Op: op, Net: c.RemoteAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
