package stats_test

import (
	"math"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

func TestSignedRank(t *testing.T) {
	tests := []struct {
		name  string
		d     []float64
		n     int
		zeros int
		v     float64
		p     float64
		exact bool
	}{
		{
			// Worked by hand: |d| ranks 1 (the -0.5) to 6, V = 2+3+4+5+6
			// = 20 of a maximum 21. P(V ≥ 20) = P(V ≤ 1) = 2/64 (the
			// empty set and {1}), two-sided p = 4/64.
			name: "hand n=6", d: []float64{1.5, -0.5, 2.5, 3.5, 4.5, 5.5},
			n: 6, v: 20, p: 4.0 / 64, exact: true,
		},
		{
			// Hollander & Wolfe's depression data, the example of R's
			// wilcox.test: x - y, V = 40; the published one-sided
			// p = 0.01953 = 10/512 (10 subsets of 1..9 sum to ≤ 5), so
			// two-sided 20/512. SciPy 1.10.1 wilcoxon(x, y,
			// method="exact"): 0.0390625.
			name: "Hollander-Wolfe depression",
			d: []float64{1.83 - 0.878, 0.50 - 0.647, 1.62 - 0.598, 2.48 - 2.05, 1.68 - 1.06,
				1.88 - 1.29, 1.55 - 1.06, 3.06 - 3.14, 1.30 - 1.29},
			n: 9, v: 40, p: 20.0 / 512, exact: true,
		},
		{
			// Student's sleep data, group 1 - group 2: one zero (dropped)
			// and a tie at 1.3. R's wilcox.test(extra ~ group, data =
			// sleep, paired = TRUE) prints V = 0, p-value = 0.009091;
			// SciPy wilcoxon(..., zero_method="wilcox", correction=True,
			// method="approx"): 0.009090698015925054.
			name: "sleep",
			d:    []float64{-1.2, -2.4, -1.3, -1.3, 0, -1.0, -1.8, -0.8, -4.6, -1.4},
			n:    9, zeros: 1, v: 0, p: 0.009090698015925054,
		},
		{
			// 14 differences, no ties: SciPy wilcoxon(method="exact")
			// p = 0.0418701171875 (= 343/8192), V+ = 85.
			name: "exact n=14",
			d:    []float64{0.31, -0.12, 0.55, 0.08, -0.41, 0.27, 0.66, 0.19, -0.05, 0.72, 0.38, -0.23, 0.49, 0.14},
			n:    14, v: 85, p: 0.0418701171875, exact: true,
		},
		{
			// 60 rounded normal draws with ties and two zeros (see
			// testdata/reference.py): SciPy wilcoxon(zero_method="wilcox",
			// correction=True, method="approx") p = 0.4360109927441034,
			// V+ = 754.5.
			name: "approx n=60 with ties",
			d: []float64{0.1, 0.4, -0.2, -0.8, -0.4, -0.9, 0.2, 1.4, -0.4, -0.5, 0.6, 0.5, 0.2, -0.8, 0.1, 0.8, -1.2, -0.4, -1.8, -1.2,
				-1.7, -0.1, -1.2, 0.4, 0.3, -0.1, -2.4, -0.4, 0.1, 0.2, -1.4, -0.4, -0.9, -0.7, 1.2, -0.7, 0.1, 1.0, -0.5, 0,
				0.2, 0.2, -1.1, 0.2, 1.5, -1.4, 1.0, 0.2, -0.5, 2.1, 0.9, -1.1, 0.2, 0.7, -0.1, 0.8, 0.0, 0.8, 1.5, -0.6},
			n: 58, zeros: 2, v: 754.5, p: 0.4360109927441034,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := stats.SignedRank(tt.d)
			if err != nil {
				t.Fatal(err)
			}
			if r.N != tt.n || r.Zeros != tt.zeros || r.Exact != tt.exact {
				t.Errorf("N, Zeros, Exact = %d, %d, %v; want %d, %d, %v", r.N, r.Zeros, r.Exact, tt.n, tt.zeros, tt.exact)
			}
			near(t, "V", r.V, tt.v, 1e-12)
			near(t, "P", r.P, tt.p, 1e-9)
		})
	}
}

func TestSignedRankNoDifferences(t *testing.T) {
	r, err := stats.SignedRank([]float64{0, 0, 0})
	if err == nil {
		t.Errorf("no error for all-zero differences")
	}
	if !math.IsNaN(r.P) || r.Zeros != 3 {
		t.Errorf("P, Zeros = %v, %d; want NaN, 3", r.P, r.Zeros)
	}
}
