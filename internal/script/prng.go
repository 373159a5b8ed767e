package script

import (
	"math"
	"math/bits"
)

// prng is PostgreSQL's pg_prng: xoroshiro128** seeded through splitmix64.
type prng struct{ s0, s1 uint64 }

func splitmix64(state *uint64) uint64 {
	*state += 0x9E3779B97f4A7C15
	v := *state
	v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9
	v = (v ^ (v >> 27)) * 0x94D049BB133111EB
	return v ^ (v >> 31)
}

// seed is pg_prng_seed.
func (r *prng) seed(seed uint64) {
	r.s0 = splitmix64(&seed)
	r.s1 = splitmix64(&seed)
	if r.s0 == 0 && r.s1 == 0 {
		r.s0 = 0x5851F42D4C957F2D
		r.s1 = 0x14057B7EF767814F
	}
}

// uint64 is pg_prng_uint64 (xoroshiro128**).
func (r *prng) uint64() uint64 {
	s0 := r.s0
	sx := r.s1 ^ s0
	val := bits.RotateLeft64(s0*5, 7) * 9
	r.s0 = bits.RotateLeft64(s0, 24) ^ sx ^ (sx << 16)
	r.s1 = bits.RotateLeft64(sx, 37)
	return val
}

// leftmostOnePos64 is pg_leftmost_one_pos64: the 0-based position of the
// most significant set bit (x must not be 0).
func leftmostOnePos64(x uint64) int { return 63 - bits.LeadingZeros64(x) }

// uint64Range is pg_prng_uint64_range: uniform in [rmin, rmax].
func (r *prng) uint64Range(rmin, rmax uint64) uint64 {
	if rmax <= rmin {
		return rmin
	}
	rng := rmax - rmin
	rshift := uint(63 - leftmostOnePos64(rng))
	for {
		v := r.uint64() >> rshift
		if v <= rng {
			return rmin + v
		}
	}
}

// double is pg_prng_double: uniform in [0, 1).
func (r *prng) double() float64 {
	v := r.uint64()
	return math.Ldexp(float64(v>>(64-52)), -52)
}

// doubleNormal is pg_prng_double_normal (Box-Muller).
func (r *prng) doubleNormal() float64 {
	u1 := 1.0 - r.double()
	u2 := 1.0 - r.double()
	return math.Sqrt(-2.0*math.Log(u1)) * math.Sin(2.0*math.Pi*u2)
}
