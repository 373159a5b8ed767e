package microgo

import (
	"fmt"
	"math"
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

var sink int

// threadCPU is the calling thread's CPU time so far, in nanoseconds
// (CLOCK_THREAD_CPUTIME_ID): the benchmark's own, without the time of
// the runtime's other threads.
func threadCPU() float64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return float64(ts.Nano())
}

// batches is how many parts run splits b.N into.
const batches = 8

// run runs body b.N times and reports, besides the wall time go test
// measures, the CPU time per iteration (cpu-ns/op): that of the
// benchmark's thread, in the batch of b.N/8 iterations that took the
// least. A loaded machine's other processes only ever add to a batch's
// time (the caches and the core they share), so the least is the
// steadiest figure of what the code itself costs.
func run(b *testing.B, body func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	k := min(batches, b.N)
	per := b.N / k
	least := math.Inf(1)
	for j := 0; j < k; j++ {
		start := threadCPU()
		for i := 0; i < per; i++ {
			body()
		}
		least = min(least, (threadCPU()-start)/float64(per))
	}
	for i := per * k; i < b.N; i++ {
		body()
	}
	b.ReportMetric(least, "cpu-ns/op")
}

func BenchmarkSum(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		xs := make([]int, n)
		for i := range xs {
			xs[i] = i
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			run(b, func() { sink += Sum(xs) })
		})
	}
}

func BenchmarkChecksum(b *testing.B) {
	buf := make([]byte, 64<<10)
	b.SetBytes(int64(len(buf)))
	run(b, func() { sink += int(Checksum(buf)) })
}

func BenchmarkReverse(b *testing.B) {
	buf := make([]byte, 4096)
	run(b, func() { Reverse(buf) })
}
