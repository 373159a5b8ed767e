package microgo

import (
	"fmt"
	"testing"
)

var sink int

func BenchmarkSum(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		xs := make([]int, n)
		for i := range xs {
			xs[i] = i
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink += Sum(xs)
			}
		})
	}
}

func BenchmarkChecksum(b *testing.B) {
	buf := make([]byte, 4096)
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		sink += int(Checksum(buf))
	}
}

func BenchmarkReverse(b *testing.B) {
	buf := make([]byte, 4096)
	for i := 0; i < b.N; i++ {
		Reverse(buf)
	}
}
