package report_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
)

// bisectLog is a bisect log as pgscale bisect writes it for a range of
// four commits whose third carries the change, and whose second does not
// build; the culprit's subject holds markup the HTML page must escape.
func bisectLog() *result.Bisect {
	v := func(x float64) *float64 { return &x }
	h := func(c byte) string { return strings.Repeat(string(c), 40) }
	change := result.BisectChange{From: "aaaaaaa", To: "ddddddd", Change: 0.0115, Lo: 0.0114, Hi: 0.0116, Tolerance: 0.001, Outcome: "fail", Rounds: 3}
	culprit := result.BisectChange{From: "bbbbbbb", To: "ccccccc", Change: 0.0114, Lo: 0.0113, Hi: 0.0115, Tolerance: 0.001, Outcome: "fail", Rounds: 3,
		Why:       []string{"instr/txn moved in standard_ExecutorStart"},
		Functions: []result.BisectFunction{{Function: "standard_ExecutorStart", Base: 300, Cand: 780, Delta: 480, Share: 0.98}}}
	return &result.Bisect{Complete: true, Outcome: result.BisectFound, Target: "src:/repo", Source: "/repo", What: "the server",
		Good: "base", Bad: "tip", Measure: "instr/txn", Step: "c=1", Unit: "instr", Lower: true, Counted: true, MinChange: 0.001,
		Commits: []result.BisectCommit{
			{Hash: h('a'), Subject: "base", Value: v(41000)},
			{Hash: h('b'), Subject: "breaks the build", Status: result.BisectUnbuildable},
			{Hash: h('c'), Subject: "executor: a <loop> & more", Status: result.BisectBad, Value: v(41467)},
			{Hash: h('d'), Subject: "tip", Value: v(41471)},
		},
		Steps: []result.BisectStep{
			{N: 0, Commit: h('d'), Lo: h('a'), Left: 3, StepsLeft: 2, Rounds: 3, Complete: true, Class: result.BisectBad, FromLo: &change},
			{N: 1, Commit: h('b'), Lo: h('a'), Hi: h('d'), Left: 3, StepsLeft: 2, Complete: true, Class: result.BisectUnbuildable,
				Build: &result.BisectBuild{Failed: "phase make (log: /cache/x/build.log)"}},
			{N: 2, Commit: h('c'), Lo: h('a'), Hi: h('d'), Left: 3, StepsLeft: 2, Rounds: 3, Complete: true, Class: result.BisectBad, BuildS: 61, MeasureS: 150},
		},
		Change: &change,
		Culprits: []result.BisectCulprit{{Commit: result.BisectCommit{Hash: h('c'), Subject: "executor: a <loop> & more"}, Parent: h('b'),
			Change: culprit, Share: 0.99, DiffStat: " src/backend/executor/execMain.c | 8 ++++++++\n 1 file changed, 8 insertions(+)"}},
	}
}

func TestBisectReports(t *testing.T) {
	b := bisectLog()
	c := strings.Repeat("c", 40)
	var text, md, page strings.Builder
	if err := writeTo(&text, "text", &report.Doc{Bisect: b}); err != nil {
		t.Fatal(err)
	}
	if err := writeTo(&md, "markdown", &report.Doc{Bisect: b}); err != nil {
		t.Fatal(err)
	}
	if err := writeTo(&page, "html", &report.Doc{Bisect: b}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pgscale bisect: ccccccc carries the change", "first bad commit: " + c, "carries +1.140% ± 0.010% (99% of the change)",
		"standard_ExecutorStart +480", "execMain.c | 8", "does not build", "failed: phase make"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text does not say %q:\n%s", want, text.String())
		}
	}
	for _, want := range []string{"**First bad commit:** `" + c + "`", "standard\\_ExecutorStart", "```\n src/backend/executor/execMain.c", "<details>"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown does not say %q:\n%s", want, md.String())
		}
	}
	for _, want := range []string{"First bad commit: <code>" + c + "</code>", "a &lt;loop&gt; &amp; more", "<svg", "standard_ExecutorStart"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML does not hold %q", want)
		}
	}
	if strings.Contains(page.String(), "<loop>") {
		t.Error("HTML holds the subject unescaped")
	}
}

// A change split over two commits names each part, in the HTML page
// too, counted from 1.
func TestBisectReportSplit(t *testing.T) {
	b := bisectLog()
	b.Outcome = result.BisectSplit
	second := b.Culprits[0]
	second.Commit.Hash, second.Commit.Subject = strings.Repeat("d", 40), "tip"
	b.Culprits[0].Share, second.Share = 0.5, 0.5
	b.Culprits = append(b.Culprits, second)
	var text, page strings.Builder
	if err := writeTo(&text, "text", &report.Doc{Bisect: b}); err != nil {
		t.Fatal(err)
	}
	if err := writeTo(&page, "html", &report.Doc{Bisect: b}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"the change is split over 2 places", "part 1 of 2: " + strings.Repeat("c", 40), "part 2 of 2: " + strings.Repeat("d", 40)} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text does not say %q:\n%s", want, text.String())
		}
	}
	for _, want := range []string{"Part 1 of 2: <code>", "Part 2 of 2: <code>"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML does not hold %q", want)
		}
	}
}

// A bisect stopped part way says so in its headline and at its end.
func TestBisectReportIncomplete(t *testing.T) {
	b := bisectLog()
	b.Complete, b.Outcome, b.Culprits, b.Reason = false, "", nil, "interrupted at step 2; pgscale bisect --resume DIR continues"
	var text strings.Builder
	if err := writeTo(&text, "text", &report.Doc{Bisect: b}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pgscale bisect: incomplete after 3 steps", "incomplete: interrupted at step 2; pgscale bisect --resume DIR continues"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text does not say %q:\n%s", want, text.String())
		}
	}
}

// A counted bisect says what its steps ran the commits on: copies of one
// data (a change is the code's), or data of their own on one cluster,
// which its headline then says may make a named commit's change the
// data's.
func TestBisectReportData(t *testing.T) {
	b := bisectLog()
	for i := range b.Steps {
		if b.Steps[i].Class != result.BisectUnbuildable {
			b.Steps[i].Data, b.Steps[i].Layouts = result.BisectDataCopies, 3
		}
	}
	var text strings.Builder
	if err := writeTo(&text, "text", &report.Doc{Bisect: b}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "data: 2 steps ran the commits on byte-identical copies of one data per cluster layout (made by the lower commit), 3 layouts or more: a change is the code's") ||
		strings.Contains(text.String(), "may be the data's") {
		t.Errorf("copies:\n%s", text.String())
	}
	b.Steps[2].Data, b.Steps[2].Layouts, b.Steps[2].DataWhy = result.BisectDataOwn, 1, "ccccccc: its catalog version number is 2, the data's 1"
	text.Reset()
	if err := writeTo(&text, "text", &report.Doc{Bisect: b}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pgscale bisect: ccccccc carries the change (instr/txn +1.140% ± 0.010%): executor: a <loop> & more (but step 2 ran each commit on data of its own on one cluster: a change may be the data's, not the code's)",
		"1 step ran each commit on data of its own (ccccccc: its catalog version number is 2, the data's 1), 1 of them on one cluster layout"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("own data: text does not say %q:\n%s", want, text.String())
		}
	}
}
