package stats

import (
	"fmt"
	"math"
)

// FormatChange formats a relative change and its interval as
// "-5.4% ± 0.9%": the change in percent with a sign and one decimal, then ±
// the larger of the distances from the change to the two ends of the
// interval. Intervals on ratios are asymmetric, so the printed range
// change ± that distance always covers the whole interval (and may reach a
// little past its nearer end). An interval narrower than ±0.05 % prints
// three decimals: "+0.012% ± 0.004%". An unbounded interval prints "± ∞";
// a NaN change prints "?".
func FormatChange(change, lo, hi float64) string {
	if math.IsNaN(change) {
		return "?"
	}
	pm := math.Max(hi-change, change-lo)
	if math.IsInf(pm, 0) || math.IsNaN(pm) {
		return FormatPercent(change) + " ± ∞"
	}
	if pm < fineBelow && (change != 0 || pm != 0) {
		// Counted measures (instructions under Valgrind) move by
		// hundredths of a percent: one decimal would print them as 0.
		return fmt.Sprintf("%+.3f%% ± %.3f%%", 100*change, 100*pm)
	}
	return FormatPercent(change) + fmt.Sprintf(" ± %.1f%%", 100*pm)
}

// fineBelow is the uncertainty below which FormatChange prints three
// decimals instead of one.
const fineBelow = 0.0005

// FormatPercent formats a relative change in percent with a sign and one
// decimal: 0.0542 → "+5.4%".
func FormatPercent(change float64) string {
	return fmt.Sprintf("%+.1f%%", 100*change)
}
