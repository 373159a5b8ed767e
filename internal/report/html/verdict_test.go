package html_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/report/remedy"
	"github.com/pgscale/pgscale/internal/suite"
)

// poolerCIPage is the page of a real pooler-ci suite run, counted under
// Valgrind (internal/report/testdata/pooler-ci: pgbouncer base against a
// slow build), as pgscale report BUNDLE --format html makes it.
func poolerCIPage(t *testing.T) []byte {
	t.Helper()
	b, err := suite.ReadBundle(filepath.Join("..", "testdata", "pooler-ci"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := compare.CompareSuite(b.Index, b.Cells, compare.SuiteOptions{Expect: b.Expect, Say: remedy.Say})
	if err != nil {
		t.Fatal(err)
	}
	a := compare.Analyze(b.Files, compare.Compared{Suite: s})
	return writeReport(t, report.NewDoc(a))
}

// verdictFirst is what the first screen of a page holds, as Chromium lays
// it out at 1400 px: the first section's first paragraph and its place,
// whether "What ran" is a closed <details>.
const verdictFirst = `(() => {
	const main = document.querySelector("main");
	const first = main.firstElementChild;
	const p = first.querySelector("p");
	const runs = document.querySelector("#runs > details");
	return {section: first.id, cls: p.className, text: p.textContent, top: p.getBoundingClientRect().top,
		runsClosed: !!runs && !runs.open, runsHeight: document.getElementById("runs").getBoundingClientRect().height};
})()`

type firstScreen struct {
	Section, Cls, Text string
	Top                float64
	RunsClosed         bool
	RunsHeight         float64
}

// TestVerdictFirst: a suite's page and an A/B run's open on the outcome,
// worded as the terminal words it, in the first screen; "What ran" is one
// closed section.
func TestVerdictFirst(t *testing.T) {
	needBrowser(t)
	for _, pg := range []struct {
		name, outcome, headline string
		page                    func(*testing.T) []byte
	}{
		{"pooler-ci", "failed", "Compared cand with base: failed: 2 of 2 bounded measures past their bounds", poolerCIPage},
		{"abregress", "inconclusive", "Compared slow with base: inconclusive: 4 of 4 bounded measures undecided", func(t *testing.T) []byte {
			return fixturePage(t, "abregress/base.json", "abregress/slow.json")
		}},
	} {
		t.Run(pg.name, func(t *testing.T) {
			ctx, v := open(t, pg.name+"-verdict", pg.page(t), 1400, 900)
			got := eval[firstScreen](t, ctx, verdictFirst)
			if !strings.Contains(got.Cls, "verdict-line") || !strings.HasPrefix(strings.TrimSpace(got.Text), pg.outcome+" ") || !strings.Contains(got.Text, pg.headline) {
				t.Errorf("the page opens on %q (%s in #%s), want the outcome %q and %q", got.Text, got.Cls, got.Section, pg.outcome, pg.headline)
			}
			if got.Top > 300 {
				t.Errorf("the verdict is %v px down the page", got.Top)
			}
			if !got.RunsClosed || got.RunsHeight > 120 {
				t.Errorf("What ran is not one closed section: closed %v, %v px high", got.RunsClosed, got.RunsHeight)
			}
			writeShot(t, ctx, pg.name+"-first-screen")
			v.quiet(t)
		})
	}
}

// TestCountedMeasureHasCell: in the counted pooler-ci page, the measure
// that failed the gate (the pooler's instructions per transaction, which
// the old matrix of throughput alone had no cell for) has a cell per
// suite cell, named by the cell's parameters, red and framed, and a click
// on it lands on its evidence: the why, a link to the timeline. The
// settings pgscale sets per cluster are not "settings that differ".
func TestCountedMeasureHasCell(t *testing.T) {
	needBrowser(t)
	ctx, v := open(t, "pooler-ci-matrix", poolerCIPage(t), 1400, 900)
	cols := eval[[]string](t, ctx, `[...document.querySelectorAll("#matrix-0 tr:first-child th")].map(th => th.textContent)`)
	col := -1
	for i, c := range cols {
		if strings.HasPrefix(c, "pooler-instr/txn") {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("the matrix has no column for pooler-instr/txn: %q", cols)
	}
	rows := eval[[][]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll("#matrix-0 tr")].slice(1).map(tr => [tr.cells[0].textContent, tr.cells[%[1]d].className, tr.cells[%[1]d].textContent, getComputedStyle(tr.cells[%[1]d]).outlineStyle])`, col))
	if len(rows) != 2 {
		t.Fatalf("%d rows, want one per cell: %q", len(rows), rows)
	}
	for i, r := range rows {
		want := []string{"workload=tpcb-like, 4", "workload=select-only, 4"}[i]
		if r[0] != want {
			t.Errorf("row %d is named %q, want %q", i, r[0], want)
		}
		if !strings.Contains(r[1], "worse-4") || !strings.Contains(r[1], "outside") || !strings.HasSuffix(r[2], "fail") || r[3] == "none" {
			t.Errorf("%s: pooler-instr/txn cell %q (%s, outline %s), want red, framed, failed", r[0], r[2], r[1], r[3])
		}
	}
	eval[bool](t, ctx, fmt.Sprintf(`document.querySelectorAll("#matrix-0 tr")[2].cells[%d].querySelector("a").click(), true`, col))
	time.Sleep(100 * time.Millisecond)
	landed := eval[[]string](t, ctx, `(() => {
		const card = document.querySelector(":target"); if (!card) return ["", location.hash, ""];
		const r = card.getBoundingClientRect();
		return [card.id, location.hash, card.textContent, String(r.height > 0 && r.top > -2 && r.top < innerHeight), [...card.querySelectorAll("a")].map(l => l.hash).join(" ")] })()`)
	if len(landed) < 5 || landed[0] == "" || "#"+landed[0] != landed[1] {
		t.Fatalf("a click on the cell lands on %q", landed)
	}
	for _, want := range []string{"workload=select-only, 4", "pooler-instr/txn", "+1729.0% ± 59.6%", "Past its bound +1%"} {
		if !strings.Contains(landed[2], want) {
			t.Errorf("the evidence card lacks %q: %q", want, landed[2])
		}
	}
	if landed[3] != "true" || !strings.Contains(landed[4], "#fig-timeline-ab1-c4") {
		t.Errorf("the card is not in view (%s) or does not link the cell's timeline: %q", landed[3], landed[4])
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#fig-timeline-ab1-c4").length`); n != 1 {
		t.Error("the timeline the card links to is not in the page")
	}
	if runs := eval[string](t, ctx, `document.getElementById("runs").textContent`); strings.Contains(runs, "unix_socket_directories:") || strings.Contains(runs, "settings that differ") {
		t.Errorf("pgscale's own per-cluster settings are listed as settings that differ")
	}
	v.quiet(t)
}

// TestScalingPanels: a suite's page draws each cell's curves on axes of
// its own, titled and labelled by the cell's parameters, so the ~30 tps
// tpcb-like cell is no flat line beside the ~200 tps select-only one.
func TestScalingPanels(t *testing.T) {
	needBrowser(t)
	pg := poolerCIPage(t)
	ctx, v := open(t, "pooler-ci-panels", pg, 1400, 900)
	waitDrawn(t, ctx)
	type panel struct {
		Texts []string
		Label string
		TPS   bool
	}
	// The pooler-ci fixture is counted under Valgrind: each cell's panel
	// charts its instructions per transaction, and no chart draws
	// Valgrind's throughput as the workload's (issue 46, finding 11).
	got := eval[[]panel](t, ctx, `["0", "1"].map(k => { const s = document.getElementById("scaling-cost-" + k); if (!s) return {texts: [], label: "", tps: false};
		return {texts: [...s.querySelectorAll(".u-title, .u-label")].map(x => x.textContent), label: s.querySelector(".u-wrap").getAttribute("aria-label"),
			tps: !!document.getElementById("scaling-tps-" + k)} })`)
	if len(got) != 2 {
		t.Fatalf("%d panels", len(got))
	}
	var d struct {
		Scaling struct {
			Series []struct {
				Panel  string `json:"panel"`
				Points []struct {
					Costs []struct {
						Value float64  `json:"value"`
						Hi    *float64 `json:"hi"`
					} `json:"costs"`
				} `json:"points"`
			} `json:"series"`
		} `json:"scaling"`
	}
	if err := json.Unmarshal(embeddedData(t, pg), &d); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"workload=tpcb-like", "workload=select-only"} {
		all := strings.Join(got[i].Texts, "|")
		if !strings.Contains(all, "Instructions per transaction: "+want) || !strings.Contains(all, "base, "+want) || !strings.Contains(all, "cand, "+want) {
			t.Errorf("panel %d is not titled and labelled by %s: %q", i, want, all)
		}
		if strings.Contains(all, "(2)") {
			t.Errorf("panel %d labels a file by number: %q", i, all)
		}
		if got[i].TPS {
			t.Errorf("panel %d charts Valgrind's throughput", i)
		}
		// The plot area says the y range it draws: "...; instructions, counted 0 to 1.2e5".
		var top float64
		if _, err := fmt.Sscanf(got[i].Label[strings.LastIndex(got[i].Label, " to ")+1:], "to %g", &top); err != nil {
			t.Errorf("panel %d: label %q says no y range", i, got[i].Label)
			continue
		}
		// Each axis fits its own cell's instructions.
		most := 0.0
		for _, s := range d.Scaling.Series {
			if !strings.Contains(s.Panel, want) {
				continue
			}
			for _, p := range s.Points {
				for _, c := range p.Costs {
					most = max(most, c.Value)
				}
			}
		}
		if most == 0 || top < most || top > 2*most {
			t.Errorf("panel %d's y axis reaches %g for instructions up to %g: not scaled to its cell", i, top, most)
		}
	}
	eval[bool](t, ctx, `document.getElementById("scaling").scrollIntoView(), true`)
	writeShot(t, ctx, "html-report-panels")
	v.quiet(t)
}

// TestCellLinksItsEvidence: in an A/B page with profiles (abdiff), a
// change's card links the differential flame graph of its client count,
// and following the link lands on it.
func TestCellLinksItsEvidence(t *testing.T) {
	needBrowser(t)
	ctx, v := open(t, "abdiff-links", fixturePage(t, "abdiff/base.json", "abdiff/slow.json"), 1400, 900)
	got := eval[[]string](t, ctx, `(() => {
		const row = [...document.querySelectorAll("#matrix-comparison tr")].find(tr => tr.cells[0].textContent === "2 clients");
		if (!row) return ["no row for 2 clients"];
		const card = document.getElementById(row.cells[1].querySelector("a").hash.slice(1));
		const diff = [...card.querySelectorAll("a")].find(a => a.textContent === "differential flame graph");
		if (!diff) return ["no link to a differential flame graph in " + card.textContent];
		diff.click();
		const at = document.querySelector(":target");
		return [diff.hash, at ? at.id : "", at && at.querySelector("div.flamegraph svg") ? "drawn" : "not drawn"];
	})()`)
	if len(got) != 3 || got[0] != "#fig-flame-diff-0-1-c2" || got[1] != "fig-flame-diff-0-1-c2" || got[2] != "drawn" {
		t.Errorf("the 2-client change's evidence: %q, want a link landing on the drawn differential graph fig-flame-diff-0-1-c2", got)
	}
	v.quiet(t)
}

// TestDiagnosisFirst: a single run's page opens on its diagnosis (the
// paragraph, then each step's verdict), not on charts; its speed-up
// chart's perfect scaling bends at the machine's cores (the 4-step sweep
// ran on 2: 2× at 8 clients, not 8×) (issue 46, finding 11).
func TestDiagnosisFirst(t *testing.T) {
	needBrowser(t)
	doc := reportDoc(t, "sweep.json")
	para := doc.Files[0].Diagnosis.Paragraph
	ctx, v := open(t, "sweep-diagnosis", writeReport(t, doc), 1400, 900)
	got := eval[firstScreen](t, ctx, verdictFirst)
	if got.Section != "diagnosis" || got.Cls != "diagnosis" || strings.TrimSpace(got.Text) != para {
		t.Errorf("the page opens on %q (%s in #%s), want the diagnosis %q", got.Text, got.Cls, got.Section, para)
	}
	if got.Top > 300 {
		t.Errorf("the diagnosis is %v px down the page", got.Top)
	}
	writeShot(t, ctx, "sweep-first-screen")
	waitDrawn(t, ctx)
	eval[bool](t, ctx, `document.getElementById("scaling-speedup").scrollIntoView(), true`)
	for fx, want := range map[float64]string{0.02: "perfect scaling on 2 cores: 1.00 ×", 0.98: "perfect scaling on 2 cores: 2.00 ×"} {
		tip := hover(t, ctx, "scaling-speedup", 0, fx, 0.5)
		if !strings.Contains(tip, want) {
			t.Errorf("the speed-up chart at %v of its width says %q, want %q", fx, tip, want)
		}
	}
	v.quiet(t)
}
