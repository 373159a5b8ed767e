package stats_test

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/testenv"
)

// otavaCases are series run through Apache Otava's own code
// (otava/analysis.py compute_change_points at commit 1ceb153, NumPy and
// SciPy from Debian): "sequence" and "single" are the series of Otava's
// tests (tests/change_point_divisive_test.py, tests/analysis_test.py), the
// others were drawn with numpy.random.default_rng(seed) around 100 with sd 1
// and rounded to 2 decimals. qhat is Otava's PairDistanceCalculator
// candidate over the whole series; want are the change points Otava reports
// for each (window, max p), and p the p-values of scipy.stats.ttest_ind
// (sample standard deviations) between the final segments.
var otavaCases = []struct {
	name   string
	xs     []float64
	qIndex int
	qhat   float64
	runs   []otavaRun
}{
	{"sequence", []float64{0.3, 2.4, 1.5, -0.9, -0.5, 99.7, 98.3, 99.1, 149, 149.7, 149.5, 149.1, 148.8, 150},
		5, 761.2821428571428, []otavaRun{
			{50, 0.001, []int{5, 8}, []float64{3.2783550200990086e-11, 3.826011643708491e-13}},
			{10, 0.0001, []int{5, 8}, []float64{3.2783550200990086e-11, 3.826011643708491e-13}},
		}},
	{"single", []float64{1.02, 0.95, 0.99, 1, 1.12, 1, 1.01, 0.98, 1.01, 0.96, 0.5, 0.51, 0.48, 0.48, 0.55, 0.5, 0.49, 0.51, 0.5, 0.49},
		10, 4.682222222222223, []otavaRun{
			{10, 0.0001, []int{10}, []float64{3.627606326069803e-17}},
		}},
	{"step3", []float64{100.35, 100.82, 100.33, 98.7, 100.91, 100.45, 99.46, 100.58, 100.36, 100.29, 100.03, 100.55, 99.26, 99.84, 99.52, 100.6, 100.04, 99.71, 99.22, 99.74, 100.01, 99.72, 101.29, 101.01, 97.29, 98.11, 99.83, 99.58, 100.21, 100.22, 102.12, 98.89, 99.62, 102.04, 100.65, 100.66, 99.49, 98.35, 100.17, 100.11, 95.77, 96.32, 96.93, 96.06, 96.9, 97.1, 97.04, 96.49, 97.59, 97.89},
		40, 36.66092307692306, []otavaRun{
			{50, 0.001, []int{40}, []float64{1.9049320901913075e-13}},
			{10, 0.0001, []int{40}, []float64{1.9049320901913075e-13}},
			// Otava also keeps 48: its p there, 0.0096, comes from
			// population standard deviations; with sample ones it is
			// 0.0137, above 0.01.
			{30, 0.01, []int{24, 26, 40}, []float64{2.3436242816522616e-05, 0.006494850368524979, 9.181459330231559e-09}},
		}},
	{"two", []float64{100.19, 99.48, 99.59, 97.56, 101.8, 101.14, 99.67, 100.77, 100.28, 99.45, 100.98, 99.69, 99.67, 99.21, 100.45, 99.9, 100.55, 99.39, 100.13, 99.11, 100.84, 100.19, 100.33, 100.41, 98.99, 100.78, 102.06, 98.36, 98.27, 98.5, 105.84, 105.13, 106.08, 105.72, 105.21, 105.28, 104.83, 105.87, 103.87, 104.58, 105.24, 106.8, 104.24, 103.92, 104.44, 105.97, 104.76, 106.32, 103.13, 106.13, 106.03, 103.58, 105.15, 106.22, 105.09, 106, 107.37, 105.27, 104.72, 104.23, 105.65, 104.8, 104.82, 104.89, 105.65, 103.93, 103.47, 102.57, 106.2, 105.07, 106.51, 104.99, 104.26, 105.48, 104.92, 103.75, 104.11, 106.77, 105.35, 105.42, 100.52, 100.11, 101.69, 100.7, 100.04, 100.67, 99.89, 100.99, 101.93, 99.96, 102.23, 100.13, 100.95, 99.96, 100.58, 100.85, 100.37, 100.1, 100.12, 99.98, 99.23, 100.54, 101.2, 101.71, 101.45, 103.26, 101.12, 100.34, 102.67, 99.75, 101.77, 99.84, 101.15, 98.83, 101.7, 100.64, 99.83, 102.48, 101.57, 100.85},
		30, 151.26463406052076, []otavaRun{
			{50, 0.001, []int{30, 80}, []float64{1.7969281211884375e-35, 1.5735358230546708e-35}},
			{10, 0.0001, []int{30, 80}, []float64{1.7969281211884375e-35, 1.5735358230546708e-35}},
			// Otava also keeps 105 (p 0.0016 from statistics it did not
			// recompute after removing a neighbour); between the final
			// segments its p is 0.186.
			{30, 0.01, []int{27, 30, 80}, []float64{0.003636937896772997, 9.181459330231559e-16, 5.8581773078527725e-31}},
		}},
	{"flat", []float64{102.04, 97.44, 100.42, 99.43, 99.55, 99.78, 97.98, 99.77, 99.13, 103.32, 100.23, 99.65, 99.72, 99.33, 98.94, 99.61, 100.48, 99.76, 100.96, 99.8, 100.02, 101.55, 100.55, 99.49, 99.82, 100.54, 101.94, 99.73, 99.76, 101, 99.11, 99.71, 100.88, 100.58, 100.09, 100.67, 97.17, 101.02, 99.04, 98.33, 100.28, 100.7, 99.56, 98.92, 100.03, 99.95, 101.41, 100.75, 100.19, 101.11, 99.79, 99.07, 100.58, 100.58, 99.79, 99.22, 100.23, 97.51, 100.69, 100.49},
		9, 5.499999999999986, []otavaRun{
			{50, 0.001, nil, nil}, {10, 0.0001, nil, nil}, {30, 0.01, nil, nil},
		}},
}

type otavaRun struct {
	window int
	maxP   float64
	want   []int
	p      []float64
}

func TestChangePointsAgreeWithOtava(t *testing.T) {
	for _, c := range otavaCases {
		for _, r := range c.runs {
			cps, warns := stats.ChangePoints(c.xs, stats.ChangePointOptions{Window: r.window, MaxP: r.maxP})
			checkWarnings(t, warns)
			var got []int
			for _, cp := range cps {
				got = append(got, cp.Index)
			}
			if !slices.Equal(got, r.want) {
				t.Errorf("%s window %d p %v: change points at %v, want %v", c.name, r.window, r.maxP, got, r.want)
				continue
			}
			for i, cp := range cps {
				near(t, c.name+" p", cp.P, r.p[i], 1e-6)
			}
		}
	}
}

// TestChangePointsQHat checks the E-Divisive statistic against Otava's
// value and a direct evaluation of its formula over every (τ, κ).
func TestChangePointsQHat(t *testing.T) {
	for _, c := range otavaCases {
		tau, q := bruteQHat(c.xs)
		if tau != c.qIndex {
			t.Errorf("%s: brute force splits at %d, Otava at %d", c.name, tau, c.qIndex)
		}
		near(t, c.name+" brute-force qhat", q, c.qhat, 1e-9)
		if len(c.xs) > stats.DefaultChangePointWindow {
			continue // the first window is not the whole series
		}
		cps, _ := stats.ChangePoints(c.xs, stats.ChangePointOptions{MaxP: 0.5})
		i := slices.IndexFunc(cps, func(cp stats.ChangePoint) bool { return cp.Index == c.qIndex })
		if i < 0 {
			t.Errorf("%s: no change point at %d in %v", c.name, c.qIndex, cps)
			continue
		}
		near(t, c.name+" qhat", cps[i].QHat, c.qhat, 1e-9)
	}
}

// bruteQHat maximises Q̂(x[:τ], x[τ:κ]) by its definition, in O(n⁴).
func bruteQHat(xs []float64) (int, float64) {
	best, bestQ := -1, math.Inf(-1)
	for tau := 1; tau < len(xs); tau++ {
		for kappa := tau + 1; kappa <= len(xs); kappa++ {
			x, y := xs[:tau], xs[tau:kappa]
			n, m := float64(len(x)), float64(len(y))
			var a, b, c float64
			for _, u := range x {
				for _, v := range y {
					a += math.Abs(u - v)
				}
			}
			for i := range x {
				for k := i + 1; k < len(x); k++ {
					b += math.Abs(x[i] - x[k])
				}
			}
			for j := range y {
				for k := j + 1; k < len(y); k++ {
					c += math.Abs(y[j] - y[k])
				}
			}
			q := 2 / (m + n) * a
			if n > 1 {
				q -= 2 * m / (m + n) / (n - 1) * b
			}
			if m > 1 {
				q -= 2 * n / (m + n) / (m - 1) * c
			}
			if q > bestQ {
				best, bestQ = tau, q
			}
		}
	}
	return best, bestQ
}

func TestChangePointSize(t *testing.T) {
	// 30 values around 100 then 30 around 97: the change is -3 % with an
	// interval that covers it and p far below the threshold.
	xs := noisy(1, 60, 30, -0.03, 0.01)
	cps, warns := stats.ChangePoints(xs, stats.ChangePointOptions{})
	checkWarnings(t, warns)
	if len(cps) != 1 || cps[0].Index != 30 {
		t.Fatalf("change points %v, want one at 30", cps)
	}
	c := cps[0]
	if c.NBefore != 30 || c.NAfter != 30 {
		t.Errorf("segments %d and %d, want 30 and 30", c.NBefore, c.NAfter)
	}
	near(t, "change", c.Change, c.After/c.Before-1, 1e-12)
	if !(c.Lo < -0.03 && -0.03 < c.Hi) || c.Hi-c.Lo > 0.02 {
		t.Errorf("interval [%v, %v] does not hold -3%% tightly", c.Lo, c.Hi)
	}
	if c.Confidence != stats.DefaultConfidence || !(c.P < 1e-10) {
		t.Errorf("confidence %v, p %v", c.Confidence, c.P)
	}
	if s := c.String(); s[:7] != "at 30: " {
		t.Errorf("String() = %q", s)
	}
	// A higher confidence widens the interval.
	wide, _ := stats.ChangePoints(xs, stats.ChangePointOptions{Options: stats.Options{Confidence: 0.999}})
	if !(wide[0].Lo < c.Lo && wide[0].Hi > c.Hi) {
		t.Errorf("99.9%% interval [%v, %v] is not wider than [%v, %v]", wide[0].Lo, wide[0].Hi, c.Lo, c.Hi)
	}
	// MinChange above the step drops it.
	if cps, _ := stats.ChangePoints(xs, stats.ChangePointOptions{MinChange: 0.05}); len(cps) != 0 {
		t.Errorf("MinChange 5%% kept %v", cps)
	}
}

func TestChangePointsEdges(t *testing.T) {
	for _, xs := range [][]float64{nil, {1}, {1, 2}, {5, 5, 5, 5, 5, 5, 5, 5}} {
		cps, warns := stats.ChangePoints(xs, stats.ChangePointOptions{})
		if len(cps) != 0 {
			t.Errorf("%v: change points %v", xs, cps)
		}
		checkWarnings(t, warns)
	}
	// Without noise any step is certain.
	cps, _ := stats.ChangePoints([]float64{5, 5, 5, 5, 5, 6, 6, 6, 6, 6}, stats.ChangePointOptions{})
	if len(cps) != 1 || cps[0].Index != 5 || cps[0].P != 0 || cps[0].Lo != cps[0].Hi {
		t.Errorf("clean step: %v", cps)
	}
	// Gaps are filled from the value before and reported.
	xs := noisy(2, 40, 20, 0.1, 0.01)
	xs[0], xs[25] = math.NaN(), math.Inf(1)
	cps, warns := stats.ChangePoints(xs, stats.ChangePointOptions{})
	checkWarnings(t, warns, stats.LeftOut)
	if len(cps) != 1 || cps[0].Index != 20 {
		t.Errorf("with gaps: %v", cps)
	}
	if !math.IsNaN(xs[0]) {
		t.Error("the input was modified")
	}
	_, warns = stats.ChangePoints([]float64{math.NaN(), math.NaN()}, stats.ChangePointOptions{})
	checkWarnings(t, warns, stats.LeftOut, stats.TooFew)
	_, warns = stats.ChangePoints(xs, stats.ChangePointOptions{Window: 1, MaxP: 2})
	checkWarnings(t, warns, stats.LeftOut, stats.BadOption)
}

// The detector's sensitivity and false-positive rate on Gaussian noise,
// with the default options (window 30, max p 0.001). The seeds are fixed,
// so the figures are the same on every run; docs/history.md quotes them.
const (
	sensitivitySeeds = 500
	flatSeeds        = 2000
)

// TestChangePointsFindStep: a 3 % step in noise of 1 % standard deviation
// after 40 steady values is found (a change point of its sign within 5
// values of it) in at least 99 % of series once at most 10 values after it
// are in the series (measured: 499 of 500 each way). It also
// logs how many values after the step it took, and how far from the step
// the change point was placed with all 10.
func TestChangePointsFindStep(t *testing.T) {
	testenv.Simulation(t)
	const before, tolerance = 40, 5
	for _, step := range []float64{-0.03, 0.03} {
		found := func(cps []stats.ChangePoint) (stats.ChangePoint, bool) {
			i := slices.IndexFunc(cps, func(c stats.ChangePoint) bool {
				return abs(c.Index-before) <= tolerance && c.Change*step > 0
			})
			if i < 0 {
				return stats.ChangePoint{}, false
			}
			return cps[i], true
		}
		delays, offsets := map[int]int{}, map[int]int{}
		missed := 0
		for seed := range uint64(sensitivitySeeds) {
			full := noisy(seed, before+10, before, step, 0.01)
			d := 0
			for k := 1; k <= 10 && d == 0; k++ {
				cps, _ := stats.ChangePoints(full[:before+k], stats.ChangePointOptions{})
				if _, ok := found(cps); ok {
					d = k
				}
			}
			delays[d]++
			cps, _ := stats.ChangePoints(full, stats.ChangePointOptions{})
			if c, ok := found(cps); ok {
				offsets[c.Index-before]++
			} else {
				missed++
			}
		}
		t.Logf("step %+.0f%%: values after the step in the series when first found (0: not within 10), seeds per count: %v", 100*step, delays)
		t.Logf("step %+.0f%%: with 10 values after it, change point index − step index, seeds per offset: %v", 100*step, offsets)
		// A miss is a real property of the method, not noise in the
		// test: a spurious weak change point a few values before the
		// step starts the next window there, and that window's best
		// split is not significant (seed 133 at -3 %).
		if delays[0] > sensitivitySeeds/100 || missed > sensitivitySeeds/100 {
			t.Errorf("step %+.0f%%: %d of %d seeds not found within 10 values (%d with all 10), more than 1%%", 100*step, delays[0], sensitivitySeeds, missed)
		}
	}
}

// TestChangePointsFlat measures how often flat Gaussian noise shows a
// change point, at several series lengths.
func TestChangePointsFlat(t *testing.T) {
	testenv.Slow(t)
	for _, c := range []struct {
		n     int
		bound float64 // about twice the measured rate
	}{{20, 0.03}, {50, 0.04}, {100, 0.06}, {200, 0.12}} {
		series, points := 0, 0
		for seed := range uint64(flatSeeds) {
			cps, _ := stats.ChangePoints(noisy(seed+1_000_000, c.n, c.n, 0, 0.01), stats.ChangePointOptions{})
			if len(cps) > 0 {
				series++
			}
			points += len(cps)
		}
		rate := float64(series) / flatSeeds
		t.Logf("flat, %d values: %d of %d series (%.2f%%) show a change point; %d in all, %.3f%% per value",
			c.n, series, flatSeeds, 100*rate, points, 100*float64(points)/float64(flatSeeds*c.n))
		if rate > c.bound {
			t.Errorf("flat, %d values: false-positive rate %.2f%%, bound %.1f%%", c.n, 100*rate, 100*c.bound)
		}
	}
}

// TestChangePointsBump: a 3 % dip of 10 values between two flat spells of
// 20 is found at both edges with the default window in at least 99 % of
// series (measured: 498 of 500); Otava's window of 50 finds both in 151
// (logged).
func TestChangePointsBump(t *testing.T) {
	testenv.Simulation(t)
	for _, w := range []int{0, 50} {
		both := 0
		for seed := range uint64(sensitivitySeeds) {
			xs := noisy(seed, 50, 20, -0.03, 0.01)
			for i := 30; i < 50; i++ {
				xs[i] /= 0.97
			}
			cps, _ := stats.ChangePoints(xs, stats.ChangePointOptions{Window: w})
			down := slices.ContainsFunc(cps, func(c stats.ChangePoint) bool { return abs(c.Index-20) <= 5 && c.Change < 0 })
			up := slices.ContainsFunc(cps, func(c stats.ChangePoint) bool { return abs(c.Index-30) <= 5 && c.Change > 0 })
			if down && up {
				both++
			}
		}
		t.Logf("window %d: both edges of the dip found in %d of %d series", w, both, sensitivitySeeds)
		if w == 0 && both < sensitivitySeeds*99/100 {
			t.Errorf("default window: both edges found in only %d of %d series", both, sensitivitySeeds)
		}
	}
}

// noisy returns n values around 100 with relative standard deviation sd,
// the mean moved by step (relative) from index at on.
func noisy(seed uint64, n, at int, step, sd float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	xs := make([]float64, n)
	for i := range xs {
		m := 100.0
		if i >= at {
			m *= 1 + step
		}
		xs[i] = m + 100*sd*r.NormFloat64()
	}
	return xs
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestChangePointsSharedMachine runs the detector over a real series: the
// tps of 40 short runs on this shared 2-core machine
// (testdata/shared-machine-c2.csv), during which other engineers' builds
// took up to 85 % of the CPU for a few minutes. It must find that spell:
// a drop and a recovery, with the other processes' share of the CPU
// higher between them than outside. Otava (window 10, 20 or 30, max p
// 0.001) finds the same two change points, 13 and 32; with its window of
// 50 it finds none.
func TestChangePointsSharedMachine(t *testing.T) {
	tps, other := readSharedMachine(t)
	cps, warns := stats.ChangePoints(tps, stats.ChangePointOptions{})
	checkWarnings(t, warns)
	var got []int
	for _, c := range cps {
		got = append(got, c.Index)
		t.Logf("tps %s (mean %.0f → %.0f)", c, c.Before, c.After)
	}
	if !slices.Equal(got, []int{13, 32}) {
		t.Fatalf("change points at %v, want [13 32]", got)
	}
	if !(cps[0].Change < -0.3 && cps[1].Change > 0.3) {
		t.Errorf("want a drop then a recovery: %v", cps)
	}
	mean := func(xs []float64) float64 {
		var s float64
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	in := mean(other[13:32])
	out := mean(append(slices.Clone(other[:13]), other[32:]...))
	t.Logf("other processes' CPU: %.0f%% between the change points, %.0f%% outside", in, out)
	if in < out+20 {
		t.Errorf("other processes' CPU %.0f%% between the change points, %.0f%% outside: the spell found is not the loaded one", in, out)
	}
}

// readSharedMachine reads the tps and other_cpu_pct columns of the
// recorded series.
func readSharedMachine(t *testing.T) (tps, other []float64) {
	t.Helper()
	data, err := os.ReadFile("testdata/shared-machine-c2.csv")
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs[1:] {
		x, err1 := strconv.ParseFloat(rec[1], 64)
		o, err2 := strconv.ParseFloat(rec[5], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad row %v", rec)
		}
		tps, other = append(tps, x), append(other, o)
	}
	return tps, other
}
