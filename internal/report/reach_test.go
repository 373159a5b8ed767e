package report_test

import (
	"html"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare/comparetest"
)

// What this runner could not decide (compare.Reach) is said once by every
// format that shows a comparison's verdict: the text, the markdown, the
// comment, the verdict file and the HTML page alike.
func TestReachInEveryFormat(t *testing.T) {
	sides := comparetest.TwoSides()
	sides[1].TPS[1] = comparetest.Scaled(comparetest.Base1, 0.7, 1.3, 0.75, 1.25, 0.8, 1.2)
	inputs := comparetest.Files(t, sides, []int{1, 2}, 6)
	rep := comparetest.Compare(t, inputs, "tps@c=1=-5% if decidable")
	if rep.Reach == nil {
		t.Fatalf("no reach: %s", rep.Headline())
	}
	d := doc(inputs, rep)
	for _, format := range []string{"text", "markdown", "comment", "verdict", "html"} {
		out := string(write(t, format, d))
		switch format {
		case "text":
			out = strings.Join(strings.Fields(out), " ") // wrapped
		case "markdown", "comment":
			out = strings.ReplaceAll(out, `\`, "")
		case "html":
			// Once on the page, beside the verdict; the data block at the
			// page's end carries it too.
			out, _, _ = strings.Cut(html.UnescapeString(out), `id="pgscale-data"`)
		}
		if n := strings.Count(out, rep.Reach.Text); n != 1 {
			t.Errorf("%s says what this runner cannot see %d times, want once: %s", format, n, rep.Reach.Text)
		}
	}
}
