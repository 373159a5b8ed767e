package report_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/golden"
	"github.com/pgscale/pgscale/internal/stats"
)

// An inconclusive comparison in every format that shows a comparison: 4
// rounds are too few to fail a measure far past its bound, and every
// format says so, with what would decide it.
func TestGoldenInconclusive(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 4)
	rep := comparetest.Compare(t, inputs, "tps=-5%", "p99=+20%")
	if rep.Outcome() != stats.Inconclusive {
		t.Fatalf("%s", rep.Headline())
	}
	d := doc(nil, rep)
	for _, f := range []struct{ name, format string }{
		{"inconclusive.txt", "text"}, {"inconclusive.md", "markdown"}, {"inconclusive.comment.md", "comment"},
		{"inconclusive.verdict.json", "verdict"}, {"inconclusive.bmf.json", "bmf"},
	} {
		out := write(t, f.format, d)
		if f.format != "bmf" && !strings.Contains(string(out), "would decide it") {
			t.Errorf("%s does not say what would decide it:\n%s", f.format, out)
		}
		golden.Check(t, f.name, out)
	}
	if page := string(write(t, "html", doc(inputs, rep))); !strings.Contains(page, `class="badge warn">inconclusive<`) {
		t.Errorf("the html page has no inconclusive badge")
	}
}

// Without bounds every format says "no bounds given" and what changed, and
// never "within bounds" (issue 32, finding 3).
func TestGoldenNoBounds(t *testing.T) {
	rep := comparetest.Compare(t, comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 6))
	d := doc(nil, rep)
	for _, f := range []struct{ name, format string }{{"no-bounds.txt", "text"}, {"no-bounds.comment.md", "comment"}} {
		out := string(write(t, f.format, d))
		if strings.Contains(out, "within") || !strings.Contains(out, "no bounds given") {
			t.Errorf("%s:\n%s", f.format, out)
		}
		golden.Check(t, f.name, []byte(out))
	}
}

// A run that rounded until decided is decided again at the look of its
// last round, and says so: the rounds, the most, why it stopped and the
// level of the look.
func TestGoldenRoundsUntilDecided(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 12)
	ab := inputs[0].File.AB
	ab.RoundsMax, ab.Stopped = 30, "decided after 12 rounds"
	rep := comparetest.Compare(t, inputs, "tps=-5%")
	if rep.Sequential == nil || rep.Sequential.Look != 12 || rep.Sequential.Max != 30 {
		t.Fatalf("sequential %+v", rep.Sequential)
	}
	d := doc(nil, rep)
	out := string(write(t, "text", d))
	if !strings.Contains(out, "rounds until decided: round 12 of up to 30, decided after 12 rounds") {
		t.Errorf("the method line does not say the look:\n%s", out)
	}
	golden.Check(t, "auto.txt", []byte(out))
	golden.Check(t, "auto.verdict.json", write(t, "verdict", d))
}

// A run cut short before it decided records no reason it stopped: its
// method line ends at the count and then says it is incomplete, with no
// ", ;" between (issue 46, finding 11: "layout 3 of up to 30, ; INCOMPLETE").
func TestRoundsUntilDecidedCutShort(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1, 2}, 3)
	ab := inputs[0].File.AB
	ab.RoundsMax, ab.Stopped = 30, ""
	rep := comparetest.Compare(t, inputs, "tps=-5%")
	rep.Incomplete = "interrupted"
	out := string(write(t, "text", doc(nil, rep)))
	if !strings.Contains(out, "round 3 of up to 30; INCOMPLETE: interrupted") {
		t.Errorf("the method line does not end at the count:\n%s", out)
	}
	for _, glitch := range []string{", ;", ",;", ", \n"} {
		if strings.Contains(out, glitch) {
			t.Errorf("%q in:\n%s", glitch, out)
		}
	}
}
