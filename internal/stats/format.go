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
// little past its nearer end). An unbounded interval prints "± ∞"; a NaN
// change prints "?".
func FormatChange(change, lo, hi float64) string {
	if math.IsNaN(change) {
		return "?"
	}
	pm := math.Max(hi-change, change-lo)
	if math.IsInf(pm, 0) || math.IsNaN(pm) {
		return FormatPercent(change) + " ± ∞"
	}
	return FormatPercent(change) + fmt.Sprintf(" ± %.1f%%", 100*pm)
}

// FormatPercent formats a relative change in percent with a sign and one
// decimal: 0.0542 → "+5.4%".
func FormatPercent(change float64) string {
	return fmt.Sprintf("%+.1f%%", 100*change)
}
