package report_test

import (
	"math"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/golden"
	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/report"
)

// microDoc is a micro-benchmark run of 8 rounds judged against
// micro:*=+5%: cached/delete 8 % slower, the others unchanged, every
// value a few tenths of a percent off its centre (the same jitter on both
// sides of a round, and a little of each side's own).
func microDoc(t *testing.T) *report.Doc {
	t.Helper()
	run := &micro.Run{Version: micro.RunVersion, Command: "go test -bench .", Format: "go",
		Targets: []micro.Target{{Name: "main"}, {Name: "patch"}}}
	centre := map[string]float64{"cached/get": 2875, "cached/put": 3120, "cached/delete": 2727, "plain/scan": 81250}
	slow := map[string]float64{"cached/delete": 1.08}
	for i := 0; i < 8; i++ {
		var round micro.Round
		for side, name := range []string{"main", "patch"} {
			tr := micro.TargetRun{Target: name, Seconds: 2.5}
			for _, b := range []string{"cached/get", "cached/put", "cached/delete", "plain/scan"} {
				v := centre[b] * (1 + 0.004*math.Sin(float64(3*i+len(b)))) * (1 + 0.002*math.Cos(float64(7*i+side+len(b))))
				if name == "patch" && slow[b] != 0 {
					v *= slow[b]
				}
				tr.Samples = append(tr.Samples, micro.Sample{Name: b, Values: []micro.Value{{Unit: "ns/op", Value: v}, {Unit: "allocs/op", Value: 3}}})
			}
			round.Runs = append(round.Runs, tr)
		}
		run.Rounds = append(run.Rounds, round)
	}
	bs, err := micro.ParseBounds([]string{"micro:*=+5%"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := micro.Analyze(run, micro.Options{Bounds: bs})
	if err != nil {
		t.Fatal(err)
	}
	return report.NewDoc(&compare.Analysis{Micro: []*micro.Analysis{a}})
}

// The micro section in text, the bot's comment and the verdict file.
func TestMicroFormats(t *testing.T) {
	d := microDoc(t)
	golden.Check(t, "micro.txt", write(t, "text", d))
	golden.Check(t, "micro.comment.md", write(t, "comment", d))
	golden.Check(t, "micro.verdict.json", write(t, "verdict", d))
	page := string(write(t, "html", d))
	for _, w := range []string{`<a href="#micro">Micro-benchmarks</a>`, `<h3>patch against main</h3>`,
		`<b>Microbench: 3 of 4 measures within bounds (1 failed, 0 inconclusive)</b>`, `<li>cached: 1 of 3 slower, 1 past its bound, median -0.0% ± ∞</li>`} {
		if !strings.Contains(page, w) {
			t.Errorf("the HTML page lacks %q", w)
		}
	}
	// The failed measure leads the table.
	if i, j := strings.Index(page, "<code>cached/delete</code>"), strings.Index(page, "<code>cached/get</code>"); i < 0 || j < 0 || i > j {
		t.Errorf("the micro table does not lead with the failed measure (at %d, the first passed at %d)", i, j)
	}
}
