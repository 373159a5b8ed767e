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

// run runs b.N iterations of the body setup returns and reports, besides
// the wall time go test measures, the CPU time per iteration (cpu-ns/op):
// that of the benchmark's thread, in the batch of b.N/8 iterations that
// took the least, each batch on data of its own from setup. A loaded
// machine's other processes only ever add to a batch's time (the caches
// and the core they share), and on this machine a buffer's pages were now
// and then slow to reach for a whole process (+45-90 % for
// BenchmarkReverse in about one process of twenty under load), so the
// least over fresh data is the steadiest figure of what the code costs.
func run(b *testing.B, setup func() func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	k := min(batches, b.N)
	least := math.Inf(1)
	var kept []func() // every batch's data stays live, so none reuses another's
	for j := 0; j < k; j++ {
		body := setup()
		kept = append(kept, body)
		per := b.N / k
		if j == k-1 {
			per = b.N - j*(b.N/k)
		}
		start := threadCPU()
		for i := 0; i < per; i++ {
			body()
		}
		least = min(least, (threadCPU()-start)/float64(per))
	}
	b.ReportMetric(least, "cpu-ns/op")
	runtime.KeepAlive(kept)
}

func BenchmarkSum(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			run(b, func() func() {
				xs := make([]int, n)
				for i := range xs {
					xs[i] = i
				}
				return func() { sink += Sum(xs) }
			})
		})
	}
}

func BenchmarkChecksum(b *testing.B) {
	b.SetBytes(64 << 10)
	run(b, func() func() {
		buf := make([]byte, 64<<10)
		return func() { sink += int(Checksum(buf)) }
	})
}

func BenchmarkReverse(b *testing.B) {
	run(b, func() func() {
		buf := make([]byte, 4096)
		return func() { Reverse(buf) }
	})
}
