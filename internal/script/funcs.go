package script

import "math"

const (
	fnvPrime       = 0x100000001b3
	fnvOffsetBasis = 0xcbf29ce484222325
	mm2Mul         = 0xc6a4a7935bd1e995
	mm2MulTimes8   = 0x35253c9ade8f4ca8
	mm2Rot         = 47
)

// getrand is pgbench's uniform random integer in [min, max].
func getrand(r *prng, lo, hi int64) int64 {
	return lo + int64(r.uint64Range(0, uint64(hi-lo)))
}

func getExponentialRand(r *prng, lo, hi int64, parameter float64) int64 {
	cut := math.Exp(-parameter)
	uniform := 1.0 - r.double()
	rnd := -math.Log(cut+(1.0-cut)*uniform) / parameter
	return lo + int64(float64(hi-lo+1)*rnd)
}

func getGaussianRand(r *prng, lo, hi int64, parameter float64) int64 {
	var stdev float64
	for {
		stdev = r.doubleNormal()
		if !(stdev < -parameter || stdev >= parameter) {
			break
		}
	}
	rnd := (stdev + parameter) / (parameter * 2.0)
	return lo + int64(float64(hi-lo+1)*rnd)
}

func computeIterativeZipfian(r *prng, n int64, s float64) int64 {
	b := math.Pow(2.0, s-1.0)
	if n <= 1 {
		return 1
	}
	var x float64
	for {
		u := r.double()
		v := r.double()
		x = math.Floor(math.Pow(u, -1.0/(s-1.0)))
		t := math.Pow(1.0+1.0/x, s-1.0)
		if v*x*(t-1.0)/(b-1.0) <= t/b && x <= float64(n) {
			break
		}
	}
	return int64(x)
}

func getZipfianRand(r *prng, lo, hi int64, s float64) int64 {
	n := hi - lo + 1
	return lo - 1 + computeIterativeZipfian(r, n, s)
}

func hashFNV1a(val int64, seed uint64) int64 {
	result := uint64(fnvOffsetBasis) ^ seed
	for i := 0; i < 8; i++ {
		octet := uint64(val & 0xff)
		val >>= 8
		result ^= octet
		result *= fnvPrime
	}
	return int64(result)
}

func hashMurmur2(val int64, seed uint64) int64 {
	result := seed ^ mm2MulTimes8
	k := uint64(val)
	k *= mm2Mul
	k ^= k >> mm2Rot
	k *= mm2Mul
	result ^= k
	result *= mm2Mul
	result ^= result >> mm2Rot
	result *= mm2Mul
	result ^= result >> mm2Rot
	return int64(result)
}

// permute is pgbench's pseudorandom permutation of [0, size).
func permute(val, isize, seed int64) int64 {
	if isize < 2 {
		return 0
	}
	var state prng
	state.seed(uint64(seed))
	size := uint64(isize)
	v := uint64(val) % size
	masklen := uint(leftmostOnePos64(size))
	mask := (uint64(1) << masklen) - 1
	for i := 0; i < 6; i++ {
		m := (state.uint64() & mask) | 1
		r := state.uint64() & mask
		if v <= mask {
			v = ((v * m) ^ r) & mask
			v = ((v << 1) & mask) | (v >> (masklen - 1))
		}
		m = (state.uint64() & mask) | 1
		r = state.uint64() & mask
		t := size - 1 - v
		if t <= mask {
			t = ((t * m) ^ r) & mask
			t = ((t << 1) & mask) | (t >> (masklen - 1))
			v = size - 1 - t
		}
		r = state.uint64Range(0, size-1)
		v = (v + r) % size
	}
	return int64(v)
}
