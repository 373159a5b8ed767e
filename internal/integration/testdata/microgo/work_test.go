package microgo

import (
	"fmt"
	"syscall"
	"testing"
)

var sink int

// cpuTime is the process's CPU time so far, in nanoseconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano() + ru.Stime.Nano())
}

// run runs body b.N times and reports, besides the wall time go test
// measures, the process's CPU time per iteration (cpu-ns/op): the time a
// loaded machine's other processes do not add to.
func run(b *testing.B, body func()) {
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		body()
	}
	b.ReportMetric((cpuTime()-start)/float64(b.N), "cpu-ns/op")
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
