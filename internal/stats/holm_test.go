package stats_test

import (
	"math"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

func TestHolm(t *testing.T) {
	tests := []struct {
		name string
		ps   []float64
		want []float64
	}{
		{
			// By hand: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1
			// are 0.02, 0.03, 0.06, 0.04; the running maximum makes the
			// last 0.06. At alpha 0.05 Holm rejects the first two and
			// stops at 0.03 > 0.05/2, as the adjusted values say.
			name: "four",
			ps:   []float64{0.01, 0.04, 0.03, 0.005},
			want: []float64{0.03, 0.06, 0.06, 0.02},
		},
		{
			// A NaN counts as 1 and still counts in m = 2.
			name: "NaN",
			ps:   []float64{math.NaN(), 0.01},
			want: []float64{1, 0.02},
		},
		{
			// 2·0.5 = 1 caps, and the running maximum carries 1 on.
			name: "capped",
			ps:   []float64{0.6, 0.5},
			want: []float64{1, 1},
		},
		{
			// Ties keep their order and share the multiplier of the
			// first: 3·0.01, then max(0.03, 2·0.01).
			name: "ties",
			ps:   []float64{0.01, 0.2, 0.01},
			want: []float64{0.03, 0.2, 0.03},
		},
		{name: "one", ps: []float64{0.04}, want: []float64{0.04}},
		{name: "none", ps: nil, want: []float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stats.Holm(tt.ps)
			if len(got) != len(tt.want) {
				t.Fatalf("Holm(%v) = %v, want %v", tt.ps, got, tt.want)
			}
			for i := range got {
				near(t, "adjusted p", got[i], tt.want[i], 1e-15)
			}
		})
	}
}
