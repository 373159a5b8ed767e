// Package microgo is the micro-benchmark fixture of pgscale's tests: a
// few small functions whose benchmarks a second commit makes slower or
// leaves alone.
package microgo

import "hash/crc32"

// Sum adds the slice up.
func Sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// Checksum is the CRC-32 of b.
func Checksum(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// Reverse reverses b in place.
func Reverse(b []byte) {
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
}
