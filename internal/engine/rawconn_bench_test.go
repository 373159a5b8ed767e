package engine

import (
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkSocketCalls times what rawConn's system calls cost the kernel
// without any scheduling in the way: on a unix socket pair, one send of a
// query-sized message, the receive that gets it and a receive that finds
// nothing, made with send/recv (what rawConn uses, as libpq does) and with
// write/read; and beside them what each wrong guess of Read costs: a
// receive that finds nothing (read first too early) and a poll that finds
// the answer already there (waited first when it was not needed).
//
//	go test -run - -bench SocketCalls -count 6 ./internal/engine
func BenchmarkSocketCalls(b *testing.B) {
	msg := make([]byte, 64)
	buf := make([]byte, 8192)
	// call makes one send or receive; write and read ignore the flags.
	call := func(trap, fd uintptr, p []byte) {
		flags := uintptr(0)
		if trap == syscall.SYS_SENDTO {
			flags = unix.MSG_NOSIGNAL
		}
		syscall.RawSyscall6(trap, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), flags, 0, 0)
	}
	for _, v := range []struct {
		name       string
		send, recv uintptr
	}{
		{"send-recv", syscall.SYS_SENDTO, syscall.SYS_RECVFROM},
		{"write-read", syscall.SYS_WRITE, syscall.SYS_READ},
	} {
		b.Run(v.name, func(b *testing.B) {
			w, r := socketPair(b)
			for b.Loop() {
				call(v.send, uintptr(w), msg)
				call(v.recv, uintptr(r), buf)
				call(v.recv, uintptr(r), buf) // EAGAIN
			}
		})
	}
	b.Run("recv-empty", func(b *testing.B) {
		_, r := socketPair(b)
		for b.Loop() {
			call(syscall.SYS_RECVFROM, uintptr(r), buf)
		}
	})
	b.Run("poll-ready", func(b *testing.B) {
		w, r := socketPair(b)
		call(syscall.SYS_SENDTO, uintptr(w), msg)
		fds := [1]unix.PollFd{{Fd: int32(r), Events: unix.POLLIN}}
		for b.Loop() {
			syscall.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1, 0, 0, 0, 0)
		}
	})
}

// socketPair returns a connected unix stream pair whose reading end does
// not block, closed when b ends.
func socketPair(b *testing.B) (w, r int) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	if err := unix.SetNonblock(fds[1], true); err != nil {
		b.Fatal(err)
	}
	return fds[0], fds[1]
}
