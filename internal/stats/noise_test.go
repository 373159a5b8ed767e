package stats_test

import (
	"math"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
)

func TestRoundsToDetect(t *testing.T) {
	d2 := math.Log(1.02)
	tests := []struct {
		name                    string
		sd, change, conf, power float64
		want                    int
	}{
		// Effect size dz = δ/sd. The exact smallest n for a two-sided
		// paired t-test at alpha 0.05 and power 0.8, from SciPy's
		// noncentral t (testdata/reference.py, exact_n), agrees with
		// G*Power's published matched-pairs sizes (dz 0.2: 199, 0.5: 34,
		// 0.8: 15) and with the formula at every point here.
		{"dz=0.2", d2 / 0.2, 0.02, 0.95, 0.8, 199},
		{"dz=0.5", d2 / 0.5, 0.02, 0.95, 0.8, 34},
		{"dz=0.8", d2 / 0.8, 0.02, 0.95, 0.8, 15},
		{"dz=1", d2, 0.02, 0.95, 0.8, 10},
		{"dz=1.5", d2 / 1.5, 0.02, 0.95, 0.8, 6},
		// 99 % confidence and 90 % power: exact and formula both 63.
		{"dz=0.5 strict", d2 / 0.5, 0.02, 0.99, 0.9, 63},
		// A 5 % change with the same sd: dz = ln 1.05/(ln 1.02/0.5) =
		// 1.232; formula_n in testdata/reference.py: 8.
		{"5% at dz(2%)=0.5", d2 / 0.5, 0.05, 0.95, 0.8, 8},
		// A -2 % change is slightly easier than +2 % (|ln 0.98| > ln 1.02):
		// formula_n gives 191 against 199.
		{"-2% at dz(+2%)=0.2", d2 / 0.2, -0.02, 0.95, 0.8, 191},
		{"no noise", 0, 0.02, 0.95, 0.8, 2},
		{"no change", 0.01, 0, 0.95, 0.8, 0},
		{"NaN sd", math.NaN(), 0.02, 0.95, 0.8, 0},
		{"negative sd", -0.01, 0.02, 0.95, 0.8, 0},
		{"bad confidence", 0.01, 0.02, 1, 0.8, 0},
		{"bad power", 0.01, 0.02, 0.95, 0, 0},
	}
	for _, tt := range tests {
		if got := stats.RoundsToDetect(tt.sd, tt.change, tt.conf, tt.power); got != tt.want {
			t.Errorf("%s: RoundsToDetect(%v, %v, %v, %v) = %d, want %d", tt.name, tt.sd, tt.change, tt.conf, tt.power, got, tt.want)
		}
	}
}

func TestNoiseAA(t *testing.T) {
	aa := []float64{0.012, -0.008, 0.003, -0.015, 0.006, 0.010, -0.004, -0.011, 0.009, 0.001, -0.002, 0.005}
	shifted := make([]float64, len(aa))
	for i, x := range aa {
		shifted[i] = x + 0.02
	}
	tests := []struct {
		name             string
		base, cand       []float64
		opt              stats.NoiseOptions
		sd, p            float64
		rounds2, rounds5 int
		power            float64
		warnings         []stats.WarningKind
	}{
		{
			// 12 A/A rounds. Python statistics.stdev of the log ratios
			// 0.008649750390513116; SciPy ttest_1samp p =
			// 0.8449446642826843; rounds for 2 % and 5 % from the formula
			// with SciPy's t quantiles: 4 and 3.
			name: "quiet", base: ones(12), cand: exps(aa...),
			sd: 0.008649750390513116, p: 0.8449446642826843, rounds2: 4, rounds5: 3, power: 0.8,
		},
		{
			// The same noise with a 2 % offset: the sd is unchanged, but
			// an A/A run should not show a significant change.
			name: "sides differ", base: ones(12), cand: exps(shifted...),
			sd: 0.008649750390513116, p: math.NaN(), rounds2: 4, rounds5: 3, power: 0.8,
			warnings: []stats.WarningKind{stats.AANotNull},
		},
		{
			// Three rounds: an sd, but a rough one; too few for the
			// median cross-check as well. By hand the logs 0.01, -0.01,
			// 0 have sd 0.01, so formula_n(0.01/ln 1.02) = 5 and
			// formula_n(0.01/ln 1.05) = 3.
			name: "three rounds", base: ones(3), cand: exps(0.01, -0.01, 0),
			sd: 0.01, p: 1, rounds2: 5, rounds5: 3, power: 0.8,
			warnings: []stats.WarningKind{stats.TooFew},
		},
		{
			name: "bad power", base: ones(12), cand: exps(aa...), opt: stats.NoiseOptions{Power: 2},
			sd: 0.008649750390513116, p: 0.8449446642826843, rounds2: 4, rounds5: 3, power: 0.8,
			warnings: []stats.WarningKind{stats.BadOption},
		},
		{
			name: "one round", base: ones(1), cand: exps(0.01),
			sd: math.NaN(), p: math.NaN(), power: 0.8,
			warnings: []stats.WarningKind{stats.TooFew},
		},
	}
	aaMeasure := stats.Measure{Name: "tps", Direction: stats.HigherIsBetter}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := stats.NoiseAA(aaMeasure, tt.base, tt.cand, tt.opt)
			near(t, "SDLog", n.SDLog, tt.sd, 1e-12)
			if !math.IsNaN(tt.p) {
				near(t, "P", n.P, tt.p, 1e-9)
			}
			if n.Rounds2 != tt.rounds2 || n.Rounds5 != tt.rounds5 || n.Power != tt.power {
				t.Errorf("Rounds2, Rounds5, Power = %d, %d, %v; want %d, %d, %v", n.Rounds2, n.Rounds5, n.Power, tt.rounds2, tt.rounds5, tt.power)
			}
			checkWarnings(t, n.Warnings, tt.warnings...)
		})
	}
}
