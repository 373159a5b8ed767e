package report_test

import (
	"bytes"
	stdhtml "html"
	"regexp"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/golden"
	"github.com/pgscale/pgscale/internal/report/remedy"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// poolerCounts are one step's counts of a server with a pooler counted in
// front of it, as the pgbouncer fixture's few commit against base made
// them (docs/counting-instructions.md, "Functions that changed"): the
// server's functions the same on both sides, the pooler's release_server
// 63 instructions a transaction on the baseline (side 0) and 74 on the
// candidate, its event loop's turns moving by up to 6 a transaction from
// round to round (how packets bunch); about 4 230 instructions a
// transaction in all, so the total moves by a quarter of a per cent, less
// than the event loop's noise.
func poolerCounts(side, round int) *result.Instructions {
	wobble := [2][4]int{{0, 5, -4, 2}, {4, -5, 6, -3}}
	in := counts(0, round)
	tx := uint64(in.Transactions)
	release := uint64(63 + 11*side)
	fs := []result.FunctionCount{
		{Function: "release_server", Object: "pgbouncer", Self: release * tx},
		{Function: "event_base_loop", Object: "libevent-2.1.so.7.0.1", Self: uint64(370+wobble[side][(round-1)%4]) * tx},
		{Function: "per_loop_maint", Object: "pgbouncer", Self: 145 * tx},
		{Function: "sbuf_main_loop", Object: "pgbouncer", Self: 3650 * tx},
	}
	var total uint64
	for i := range fs {
		fs[i].Inclusive = fs[i].Self
		total += fs[i].Self
	}
	in.Pooler = &result.InstructionGroup{Kind: "pooler", Processes: 1, Instructions: total}
	in.PoolerPerTxn, in.PoolerFunctions = float64(total)/float64(tx), fs
	return in
}

// The finding a pull request most needs — one function of the pooler
// gained 11 instructions a transaction — while the total passes its
// bound: the comment names it first (its title, then a table of it with
// its counts before and after and its part of the total), and so do the
// markdown, the verdict file, the text and the HTML page; the comment
// links to no page this invocation does not write.
func TestGoldenFunctionFinding(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1}, 4)
	comparetest.Counted(inputs, poolerCounts)
	rep := comparetest.Compare(t, inputs, "pooler-instr/txn=+1%")
	if rep.Outcome() != stats.Pass {
		t.Fatalf("the total did not pass: %s", rep.Headline())
	}
	d := doc(nil, rep)
	d.Outputs = map[string]string{"comment": "out/comment.md"}
	comment := string(write(t, "comment", d))
	for _, want := range []string{"passed: all 1 bounded measures within their bounds; 1 function changed: release\\_server +11 a transaction (pooler, 1 client)",
		"| select-only | 1 | pooler | `release_server` | 63.0 → 74.0 | +11 (+17.5%) | +0.26% of pooler-instr/txn |"} {
		if !strings.Contains(comment, want) {
			t.Errorf("the comment lacks %q:\n%s", want, comment)
		}
	}
	if i, j := strings.Index(comment, "release_server"), strings.Index(comment, "| suite | clients | throughput"); i < 0 || j < i {
		t.Errorf("the function is not named before the measures:\n%s", comment)
	}
	if strings.Contains(comment, ".html") {
		t.Errorf("the comment links to a page it did not write:\n%s", comment)
	}
	golden.Check(t, "function-finding.comment.md", []byte(comment))
	golden.Check(t, "function-finding.md", write(t, "markdown", d))
	golden.Check(t, "function-finding.verdict.json", write(t, "verdict", d))
	if text := string(write(t, "text", d)); !strings.Contains(text, "release_server +11 (63.0 → 74.0, +17.5%; +0.26% of pooler-instr/txn)") {
		t.Errorf("the text lacks the function:\n%s", text)
	}
	page := stdhtml.UnescapeString(string(write(t, "html", doc(inputs, rep))))
	for _, want := range []string{"Functions that changed, own instructions per transaction", "<code>release_server</code></td><td class=\"n\">63.0</td><td class=\"n\">74.0</td><td class=\"n\">+11 (+17.5%)</td><td>+0.26% of pooler-instr/txn</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// A suite whose cell's total passes while a function changed: before,
// its why, its markdown and its verdict file left the cell out (only a
// step whose throughput changed was said); now every format names the
// function, the comment first.
func TestSuiteFunctionFinding(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1}, 4)
	comparetest.Counted(inputs, poolerCounts)
	for i := range inputs {
		inputs[i].Cell = []compare.Param{{Name: "workload", Value: "select-only"}}
	}
	x := &result.SuiteIndex{Name: "pooler-ci", Baseline: "master", Targets: []result.ABTarget{{Name: "master"}, {Name: "patch"}},
		Axes:  []result.SuiteAxis{{Name: "workload", Values: []string{"select-only"}}},
		Cells: []result.SuiteCell{{Key: "workload=select-only", Params: map[string]string{"workload": "select-only"}, Status: result.CellComplete}}}
	bounds, err := stats.ParseBounds([]string{"pooler-instr/txn=+1%"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := compare.CompareSuite(x, [][]compare.Input{inputs}, compare.SuiteOptions{Bounds: &bounds, Say: remedy.Say})
	if err != nil {
		t.Fatal(err)
	}
	if s.Outcome() != stats.Pass {
		t.Fatalf("the suite did not pass: %s", s.Headline())
	}
	d := suiteDoc(inputs, s)
	for format, want := range map[string]string{
		"comment":  "| workload=select-only | 1 | pooler | `release_server` | 63.0 → 74.0 | +11 (+17.5%) | +0.26% of pooler-instr/txn |",
		"markdown": "| workload=select-only | 1 | pooler | `release_server` | 63.0 → 74.0 | +11 (+17.5%) | +0.26% of pooler-instr/txn |",
		"text":     "release_server +11 (63.0 → 74.0, +17.5%; +0.26% of pooler-instr/txn)",
		"verdict":  `"function": "release_server"`,
		"html":     "<code>release_server</code>",
	} {
		if out := strings.Join(strings.Fields(string(write(t, format, d))), " "); !strings.Contains(out, strings.Join(strings.Fields(want), " ")) {
			t.Errorf("%s lacks %q:\n%s", format, want, out)
		}
	}
	golden.Check(t, "function-finding-suite.comment.md", write(t, "comment", d))
}

// A comment written with the HTML page beside it links each changed
// function and finding to its differential flame graph, relative to the
// comment; written alone it links to nothing, and says how to get the
// page when the runs recorded profiles.
func TestCommentLinksOnlyWhatItWrites(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1}, 4)
	comparetest.Counted(inputs, func(side, round int) *result.Instructions {
		in := poolerCounts(side, round)
		in.PoolerProfile = &result.Profile{File: "profiles/" + []string{"master", "patch"}[side] + "/round-" + string(rune('0'+round)) + "-pooler.pb.gz", Unit: "instructions"}
		return in
	})
	rep := comparetest.Compare(t, inputs, "pooler-instr/txn=+1%")
	d := doc(inputs, rep)
	d.Outputs = map[string]string{"comment": "out/comment.md"}
	alone := string(write(t, "comment", d))
	if strings.Contains(alone, ".html") || !strings.Contains(alone, "an HTML report of these result files draws them") {
		t.Errorf("a comment written alone:\n%s", alone)
	}
	d.Outputs["html"] = "out/pages/report.html"
	with := string(write(t, "comment", d))
	for _, want := range []string{"[`release_server`](pages/report.html#fig-flame-diff-0-1-c1-pooler)", "[pooler, select-only, c=1](pages/report.html#fig-flame-diff-0-1-c1-pooler)"} {
		if !strings.Contains(with, want) {
			t.Errorf("a comment written with its page lacks %q:\n%s", want, with)
		}
	}
	// The profiles named are not there to read: the page draws no graph,
	// and says why under each figure, which the links land on.
	linksLand(t, with, "pages/report.html", write(t, "html", d))
}

// linksLand checks that every link of a comment into the page it was
// written beside (page, relative to the comment) lands on an id the
// written page has, found by parsing the page.
func linksLand(t *testing.T, comment, page string, written []byte) {
	t.Helper()
	ids := map[string]bool{}
	z := xhtml.NewTokenizer(bytes.NewReader(written))
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			break
		}
		if tt != xhtml.StartTagToken && tt != xhtml.SelfClosingTagToken {
			continue
		}
		for _, a := range z.Token().Attr {
			if a.Key == "id" {
				ids[a.Val] = true
			}
		}
	}
	links := regexp.MustCompile(`\]\(`+regexp.QuoteMeta(page)+`#([^)\s]+)\)`).FindAllStringSubmatch(comment, -1)
	if len(links) == 0 {
		t.Fatalf("the comment links to nothing on %s:\n%s", page, comment)
	}
	for _, l := range links {
		if !ids[l[1]] {
			t.Errorf("the comment links to %s#%s, which the written page does not have", page, l[1])
		}
	}
}
