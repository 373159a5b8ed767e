// Package stats turns measured values into the numbers pgscale reports and the
// verdicts a CI job acts on: summaries, paired and unpaired comparisons of a
// baseline against a candidate, before/during comparisons of per-second
// series, noise sizing from A/A runs, bounds and verdicts, and change points
// in a history of runs.
//
// It is pure computation. It knows nothing of PostgreSQL or of result files:
// callers hand it slices of float64 and a [Measure] that says what the values
// are and which direction is better.
//
// # Changes
//
// Every comparison reports a relative change, candidate/baseline − 1 (so
// -0.054 is 5.4 % lower), with a confidence interval on that change, a
// p-value from one named test, and warnings. Statistical caveats (too few
// rounds, values left out, no variation) travel as Warnings next to the
// numbers and never make a computation fail.
//
// # Methods, in short
//
//   - [ComparePaired]: per-round ratios cand/base. The change is their
//     geometric mean − 1. The interval is the hull of a Student t interval on
//     the mean log ratio (transformed back) and the distribution-free
//     interval of golang.org/x/perf/benchmath on the median ratio, so it is
//     at least as wide as the wider of the two. The decision test is the
//     one-sample t-test on the log ratios; the Wilcoxon signed-rank test on
//     the same log ratios is reported beside it, and a warning is raised when
//     the two disagree.
//   - [CompareUnpaired]: Mann-Whitney U (as benchstat) on the raw values, the
//     change of the medians, and the Hodges-Lehmann (Moses) interval on the
//     ratio, which is the interval that inverts the same U test.
//   - [CompareWindows]: ratio of means during/before a disturbance from
//     per-second samples, with non-overlapping batch means to keep the
//     interval honest about autocorrelation.
//   - [Evaluate]: Holm-Bonferroni over all measures of one comparison,
//     bounds, per-measure status and the verdict.
//   - [NoiseAA] and [RoundsToDetect]: noise of an A/A run and the rounds
//     needed to detect a given change.
//   - [Summarize]: median with a distribution-free interval, mean, sd, range.
//   - [ChangePoints]: where the mean of a history of values moves, by
//     E-Divisive means with a t-test as Apache Otava finds them; each with
//     its change, interval and p-value.
//
// # Use
//
//	bounds, err := stats.ParseBounds([]string{"tps=-3%,p99=+5%", "tps@c=16=-5%"})
//	// err is a *stats.BoundError: bad usage
//	var cs []stats.Comparison
//	for _, m := range measures { // one per measure and step
//		cs = append(cs, stats.ComparePaired(m, baseRounds[m], candRounds[m], stats.Options{}))
//	}
//	v, err := stats.Evaluate(cs, bounds, stats.Options{})
//	fmt.Println(v.Headline()) // "1 of 24 measures outside bounds: tps@c=16 -5.4% ± 0.9%, bound -5%"
//	if !v.Passed() { /* exit code 1 */ }
package stats
