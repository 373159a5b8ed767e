package metrics

import "math"

// Latency summarises a latency distribution in milliseconds (the result
// file has its own type of the same shape, result.Latency). The mean and
// standard deviation are exact (from sums); percentiles come from the HDR
// histogram (within 0.1 %).
type Latency struct {
	MeanMs   float64
	StddevMs float64
	MinMs    float64
	P50Ms    float64
	P90Ms    float64
	P99Ms    float64
	P999Ms   float64
	MaxMs    float64
}

// Summarize returns the latency summary of iv.
func (iv *Interval) Summarize() Latency {
	n := float64(iv.Transactions)
	if n == 0 {
		return Latency{}
	}
	mean := iv.LatSumUS / n
	variance := iv.LatSumSqUS/n - mean*mean
	if variance < 0 {
		variance = 0
	}
	q := iv.Latency.ValueAtPercentiles([]float64{50, 90, 99, 99.9})
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Latency{
		MeanMs:   mean / 1000,
		StddevMs: math.Sqrt(variance) / 1000,
		MinMs:    ms(iv.Latency.Min()),
		P50Ms:    ms(q[50]),
		P90Ms:    ms(q[90]),
		P99Ms:    ms(q[99]),
		P999Ms:   ms(q[99.9]),
		MaxMs:    ms(iv.Latency.Max()),
	}
}
