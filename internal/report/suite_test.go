package report_test

import (
	stdhtml "html"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/golden"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/report/remedy"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/suite"
)

// A real suite bundle (two cells, a baseline and a candidate that logs
// every plan, 6 rounds each; testdata/suite-regress) in every format that
// shows a suite: the matrix, the verdict judged suite-wide, the groups.
func TestGoldenSuite(t *testing.T) {
	s, files, err := readBundle(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Outcome() == stats.Pass || len(s.Verdicts) != 1 || s.Verdicts[0].Failed+s.Verdicts[0].Inconclusive == 0 {
		t.Fatalf("the regression passed: %s", s.Headline())
	}
	d := suiteDoc(files, s)
	for _, f := range []struct{ name, format string }{
		{"suite-regress.txt", "text"}, {"suite-regress.md", "markdown"},
		{"suite-regress.verdict.json", "verdict"}, {"suite-regress.bmf.json", "bmf"}, {"suite-regress.benchfmt", "benchfmt"},
		{"suite-regress.comment.md", "comment"},
	} {
		t.Run(f.name, func(t *testing.T) { golden.Check(t, f.name, write(t, f.format, d)) })
	}
	page := stdhtml.UnescapeString(string(write(t, "html", d)))
	// The page's matrix says what the text says: the suite's outcome, each
	// cell's outcome beside its change, what a cell holds, the findings
	// with their why, each cell's why and machine.
	for _, want := range []string{"rows=10000, 2", "Compared slow with base", `<span class="badge bad">failed</span>`,
		"-54.0% ± 6.4% <small>fail</small>", "-49.7% ± 44.6% <small>inconclusive</small>",
		"each side's geometric mean of its rounds", "the change ± its 95% interval",
		"Failed or inconclusive, and why:", "rows=100, slow: tps@c=2 -54.0% ± 6.4%, bound -20%: fail. Slower at 2 clients (tps -54.0% ± 6.4%) because",
		"rows=100, slow: tps@c=1 -49.7% ± 44.6%, bound -20%: inconclusive. Past its bound, but its 95% interval reaches back inside it. About 11 rounds",
		"Why:</p>", "rows=10000, slow: Slower at 1 client", "Machine:</p>", "rows=10000: the baseline's throughput at 1 client moved ±27.7%"} {
		if !strings.Contains(page, want) {
			t.Errorf("the html page lacks %q", want)
		}
	}
	cd := suiteDoc(files, s)
	cd.Color = true
	colored := string(write(t, "text", cd))
	if s.Outcome() == stats.Fail && !strings.Contains(colored, "\x1b[1;31m") {
		t.Errorf("no failed measure is marked in colour:\n%s", colored)
	}
	// Judged with a loose bound instead of the recorded ones, it passes.
	loose, _ := stats.ParseBounds([]string{"tps=-90%"})
	s2, _, err := readBundle(&loose)
	if err != nil || s2.Outcome() != stats.Pass {
		t.Errorf("with tps=-90%%: %v, %s", err, s2.Headline())
	}
}

// readBundle reads testdata/suite-regress and compares its cells, against
// bounds instead of the recorded ones when bounds is not nil, as pgscale
// report and compare do.
func readBundle(bounds *stats.Bounds) (*compare.Suite, []compare.Input, error) {
	b, err := suite.ReadBundle(filepath.Join("testdata", "suite-regress"))
	if err != nil {
		return nil, nil, err
	}
	s, err := compare.CompareSuite(b.Index, b.Cells, compare.SuiteOptions{Expect: b.Expect, Bounds: bounds, Say: remedy.Say})
	return s, b.Files, err
}

// A suite of one target shows each cell's own scaling instead of changes
// (speedup, efficiency, server CPU per transaction, the share in SQL) and
// the diagnosis of each step that has the probes' evidence: three cells of
// recorded runs, one without probes, and a cell that was not run. The
// pooled cell's speedup is per CPU-second the system had (other processes
// took the machine unevenly: 2.33× the throughput, 1.17× per CPU-second),
// so the table has a tps/cpu-s column and a line naming that cell.
func TestGoldenSuiteAlone(t *testing.T) {
	x := &result.SuiteIndex{Name: "alone", Baseline: "installed", Targets: []result.ABTarget{{Name: "installed"}},
		Axes: []result.SuiteAxis{{Name: "file", Values: []string{"pooled", "partitions", "version1", "sleep"}}}}
	var cells [][]compare.Input
	for _, name := range x.Axes[0].Values {
		c := result.SuiteCell{Key: "file=" + name, Params: map[string]string{"file": name}, Dir: name, Status: result.CellComplete}
		var in []compare.Input
		if name == "sleep" {
			c.Status = result.CellMissing
		} else {
			path := filepath.Join("testdata", name+".json")
			f, err := result.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, compare.Input{Name: "installed", File: f, Cell: []compare.Param{{Name: "file", Value: name}}, Path: path})
		}
		x.Cells = append(x.Cells, c)
		cells = append(cells, in)
	}
	s, err := compare.CompareSuite(x, cells, compare.SuiteOptions{Say: remedy.Say})
	if err != nil {
		t.Fatal(err)
	}
	d := suiteDoc(nil, s)
	golden.Check(t, "suite-alone.txt", write(t, "text", d))
	golden.Check(t, "suite-alone.md", write(t, "markdown", d))
}

// A real pooler-ci run (testdata/pooler-ci: pgbouncer built from source
// at base and at slow, a hash loop per query, counted under Valgrind,
// four rounds of the preset's quick variant) as the bot's comment: the
// verdict catches the candidate in the pooler's instructions per
// transaction (the counted measures alone are compared: the rest are
// Valgrind's, and the comment says so), and links to the pooler's
// differential flame graphs.
func TestGoldenPoolerCIComment(t *testing.T) {
	b, err := suite.ReadBundle(filepath.Join("testdata", "pooler-ci"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := compare.CompareSuite(b.Index, b.Cells, compare.SuiteOptions{Expect: b.Expect, Say: remedy.Say})
	if err != nil {
		t.Fatal(err)
	}
	d := suiteDoc(b.Files, s)
	d.Outputs = map[string]string{"comment": "out/comment.md", "html": "out/report.html"}
	out := string(write(t, "comment", d))
	for _, want := range []string{"failed: 2 of 2 bounded measures past their bounds", "`pooler-instr/txn@c=4` [workload=select-only]", "not compared (–)",
		"Where the statements went", "| workload=select-only | 4 | primary 100%, replica1 0% |",
		"(report.html#fig-flame-diff-1-3-c4-pooler)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the comment lacks %q:\n%s", want, out)
		}
	}
	linksLand(t, out, "report.html", write(t, "html", d))
	golden.Check(t, "pooler-ci.comment.md", []byte(out))
}

// suiteDoc is a suite's document, as pgscale suite and compare BUNDLE
// make it.
func suiteDoc(files []compare.Input, s *compare.Suite) *report.Doc {
	a := compare.Analyze(files, compare.Compared{Suite: s})
	return report.NewDoc(a)
}

// A counted suite's table shows what is known of each counted step: the
// instructions per transaction (the pooler's, where a pooler was
// counted), their change and the step's outcome, and no bottleneck
// verdict, which would be Valgrind's (a counted step's throughput is
// Valgrind's: "cpu-bound" or "unclear" said nothing of the workload).
func TestSuiteTableCounted(t *testing.T) {
	b, err := suite.ReadBundle(filepath.Join("testdata", "pooler-ci"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := compare.CompareSuite(b.Index, b.Cells, compare.SuiteOptions{Expect: b.Expect, Say: remedy.Say})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range s.Cells {
		for _, st := range sc.Steps {
			if st.Counted != "pooler-instr/txn" || st.Verdict != nil || len(st.Lead) != 2 {
				t.Errorf("%s at %d clients: counted %q, verdict %v, lead %v", sc.Key, st.Clients, st.Counted, st.Verdict, st.Lead)
			}
		}
	}
	d := suiteDoc(b.Files, s)
	for _, format := range []string{"text", "markdown"} {
		out := string(write(t, format, d))
		for _, want := range []string{"base pooler-instr/txn", "cand pooler-instr/txn", "+1729.0% ± 59.6%", "counted", "A counted row"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", format, want, out)
			}
		}
		for _, bad := range []string{"cpu-bound", "unclear", "base tps"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s says %q of a counted suite:\n%s", format, bad, out)
			}
		}
	}
}
