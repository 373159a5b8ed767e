package html_test

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/golden"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/report/html"
	"github.com/pgscale/pgscale/internal/report/remedy"
	"github.com/pgscale/pgscale/internal/result"
)

// pages are the reports the tests make, each from fixture result files:
// real runs of pgscale on this machine (the commands are in each file),
// rendered through the report registry as pgscale report --format html
// renders them: the files of one A/B run with their comparison.
var pages = []struct {
	name  string
	files []string
	// charts are element ids the page must hold.
	charts []string
}{
	{"sweep", []string{"sweep.json"}, []string{"scaling-tps", "scaling-p99", "scaling-speedup", "timeline-0-0", "timeline-0-3", "cpu-evidence-0", "waits-evidence-0"}},
	{"ab", []string{"ab/a.json", "ab/b.json"}, []string{"scaling-tps", "scaling-p99", "timeline-ab0-c1", "timeline-ab0-c2", "comparison-table", "matrix-comparison"}},
	{"abregress", []string{"abregress/base.json", "abregress/slow.json"}, []string{"comparison-table", "matrix-comparison", "scaling-tps", "timeline-ab0-c1"}},
	{"abdiff", []string{"abdiff/base.json", "abdiff/slow.json"}, []string{"comparison-table", "flame-diff-0-1-c1", "flame-diff-0-1-c2", "flame-0-c1", "flame-1-c2"}},
	{"abcal", []string{"abcal/base.json", "abcal/base-aa.json"}, []string{"noise-table", "scaling-tps", "timeline-ab0-c1"}},
	{"disturb", []string{"disturb.json"}, []string{"scaling-tps", "timeline-0-0", "timeline-0-1", "cpu-evidence-0", "waits-evidence-0"}},
	{"incomplete", []string{"incomplete.json"}, []string{"scaling-tps", "timeline-0-2", "step-0-2"}},
	{"profile", []string{"profile/profile.json"}, []string{"flame-0-0", "flame-0-1"}},
	{"pooler", []string{"pooler.json"}, []string{"scaling-tps", "cpu-evidence-0"}},
	{"locks", []string{"hot-row.json", "partitions.json", "sleep.json"}, []string{"scaling-tps", "waits-evidence-0", "waits-evidence-1", "waits-evidence-2"}},
	{"version1", []string{"version1.json"}, []string{"scaling-tps", "timeline-0-0"}},
	{"abprofile", []string{"abprofile/a.json", "abprofile/b.json"}, []string{"timeline-ab0-c2", "flame-0-c2", "cpu-evidence-0"}},
	// pg_rational@slow swept with --profile at load 17-19: each step's
	// CPU split by who ran it (issue 46).
	{"extprofile", []string{"extprofile/run.json"}, []string{"scaling-speedup", "flame-0-0", "flame-0-1"}},
}

// reportDoc reads fixture result files as pgscale report does: each
// named by its path, or for the files of one A/B run by its target with
// the run's comparison (or noise).
func reportDoc(t *testing.T, names ...string) *report.Doc {
	t.Helper()
	var in []compare.Input
	for _, n := range names {
		path := filepath.Join("testdata", n)
		f, err := result.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, compare.Input{Name: path, File: f, Path: path})
	}
	var cmp *compare.Comparison
	var noise *compare.Noise
	if compare.SameRun(in) {
		for i := range in {
			in[i].Name = in[i].File.Target.Name
		}
		var err error
		if cmp, noise, err = compare.OfRun(in, remedy.Say); err != nil {
			t.Fatal(err)
		}
	}
	a := compare.Analyze(in, compare.Compared{Comparison: cmp, Noise: noise})
	return report.NewDoc(a)
}

// writeReport renders d in the registry's html format.
func writeReport(t *testing.T, d *report.Doc) []byte {
	t.Helper()
	f, err := report.Lookup("html")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fixturePage is the page of fixture files, as pgscale report makes it.
func fixturePage(t *testing.T, names ...string) []byte {
	t.Helper()
	return writeReport(t, reportDoc(t, names...))
}

// readDoc reads fixture result files into a Doc, named by their paths.
func readDoc(t *testing.T, names ...string) html.Doc {
	t.Helper()
	var in []compare.Input
	for _, n := range names {
		path := filepath.Join("testdata", n)
		f, err := result.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, compare.Input{Name: path, File: f})
	}
	return docOf(in...)
}

// docOf is the Doc of files on their own, each named by its Name (where
// the pprof files it names are looked for), with their flame graphs.
func docOf(in ...compare.Input) html.Doc {
	a := compare.Analyze(in, compare.Compared{})
	return html.Doc{Files: a.Files, Flames: a.Flames}
}

func writePage(t *testing.T, doc html.Doc) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := html.Write(&buf, doc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// embeddedData returns the page's JSON data block, indented.
func embeddedData(t *testing.T, pg []byte) []byte {
	t.Helper()
	const open = `<script type="application/json" id="pgscale-data">`
	_, rest, ok := bytes.Cut(pg, []byte(open))
	if !ok {
		t.Fatal("the page has no data block")
	}
	body, _, ok := bytes.Cut(rest, []byte("</script>"))
	if !ok {
		t.Fatal("the data block is not closed")
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("the data block is not JSON: %v", err)
	}
	out, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// TestGolden compares each page's data (the JSON every chart and table
// is drawn from) with testdata/NAME.golden (internal/golden).
func TestGolden(t *testing.T) {
	for _, pg := range pages {
		t.Run(pg.name, func(t *testing.T) {
			golden.Check(t, pg.name, embeddedData(t, fixturePage(t, pg.files...)))
		})
	}
}

// TestChartsInPage checks that every expected chart is in the page
// source, so a missing chart fails here without a browser too.
func TestChartsInPage(t *testing.T) {
	for _, pg := range pages {
		src := string(fixturePage(t, pg.files...))
		for _, id := range pg.charts {
			if !strings.Contains(src, `id="`+id+`"`) {
				t.Errorf("%s: no element with id %q", pg.name, id)
			}
		}
	}
}

func TestRefusesUnredactedPassword(t *testing.T) {
	doc := readDoc(t, "sweep.json")
	doc.Files[0].File.Command = append(doc.Files[0].File.Command, "--dsn", "postgres://u:hunter2@db/x")
	var buf bytes.Buffer
	err := html.Write(&buf, doc)
	if err == nil || !strings.Contains(err.Error(), "password") {
		t.Fatalf("Write with a password in the command: %v, want a refusal", err)
	}
	if strings.Contains(buf.String(), "hunter2") {
		t.Error("the password reached the output")
	}
}

func TestNoFiles(t *testing.T) {
	if err := html.Write(&bytes.Buffer{}, html.Doc{}); err == nil {
		t.Error("Write of an empty doc succeeded")
	}
}

// TestUnwordedComparison: a comparison without the words of each of its
// rows is refused, not drawn with rows missing.
func TestUnwordedComparison(t *testing.T) {
	doc := readDoc(t, "sweep.json")
	doc.Comparison = &html.Comparison{Of: &compare.Comparison{Rows: []compare.Row{{}}}}
	if err := html.Write(&bytes.Buffer{}, doc); err == nil || !strings.Contains(err.Error(), "words") {
		t.Errorf("Write of a comparison without its rows' words: %v, want a refusal", err)
	}
}

// TestProfileMissing: a result whose pprof file is not beside it gets a
// line saying so in place of the flame graph.
func TestProfileMissing(t *testing.T) {
	f, err := result.Read(filepath.Join("testdata", "profile", "profile.json"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(writePage(t, docOf(compare.Input{Name: filepath.Join(t.TempDir(), "moved.json"), File: f})))
	if !strings.Contains(src, "profile file not found beside the result file") {
		t.Error("no note of the missing profile file")
	}
	if strings.Contains(src, `id="flame-0-0" role="img"`) {
		t.Error("a flame graph was drawn without its file")
	}
}

// TestGapBreaksTheLine: an interval missing from a step's series (a
// reconnect, a stalled collector) breaks the line and is counted, and the
// step's disturbance window stays on the step's clock.
func TestGapBreaksTheLine(t *testing.T) {
	doc := readDoc(t, "disturb.json")
	s := &doc.Files[0].File.Steps[0]
	if len(s.Intervals) < 3 {
		t.Fatalf("the fixture's first step has %d intervals, want 3", len(s.Intervals))
	}
	lost := s.Intervals[1]
	s.Intervals = append(s.Intervals[:1:1], s.Intervals[2:]...)
	s.Summary.Transactions -= lost.Transactions
	doc.Files[0] = compare.AnalyzeFile(compare.Input{Name: doc.Files[0].Name, File: doc.Files[0].File})
	var data struct {
		Timelines []struct {
			ID       string `json:"id"`
			Gaps     int    `json:"gaps"`
			GapSpans []struct {
				From float64 `json:"from_s"`
				To   float64 `json:"to_s"`
			} `json:"gap_spans"`
			Series []struct {
				Segments [][]struct {
					T float64 `json:"t"`
				} `json:"segments"`
			} `json:"series"`
			Windows []struct {
				From float64 `json:"from_s"`
			} `json:"windows"`
		} `json:"timelines"`
	}
	if err := json.Unmarshal(embeddedData(t, writePage(t, doc)), &data); err != nil {
		t.Fatal(err)
	}
	tl := data.Timelines[0]
	if tl.Gaps != 1 || len(tl.Series[0].Segments) != 2 {
		t.Fatalf("%s: %d gaps, %d segments; want 1 and 2", tl.ID, tl.Gaps, len(tl.Series[0].Segments))
	}
	if got := tl.Series[0].Segments[1][0].T; got < lost.StartS+lost.LengthS-1e-6 {
		t.Errorf("the second segment starts at %v s, before the lost interval ended", got)
	}
	if g := tl.GapSpans; len(g) != 1 || math.Abs(g[0].From-lost.StartS) > 0.01 || math.Abs(g[0].To-(lost.StartS+lost.LengthS)) > 0.01 {
		t.Errorf("the gap is marked at %+v, want the lost interval's %v–%v s", g, lost.StartS, lost.StartS+lost.LengthS)
	}
	if len(tl.Windows) != 1 || tl.Windows[0].From != 1 {
		t.Errorf("windows %+v, want the ddl-churn window from 1 s", tl.Windows)
	}
	if other := data.Timelines[1]; other.Gaps != 0 {
		t.Errorf("%s: %d gaps in an untouched step", other.ID, other.Gaps)
	}
}

// TestPerCPUColumn: a sweep whose speedup is per CPU-second the system had
// (sweep.json: other processes took the machine unevenly) shows that
// throughput in the scaling table's tps/cpu-s column, beside throughput;
// one whose speedup is of throughput has no such column.
func TestPerCPUColumn(t *testing.T) {
	src := string(fixturePage(t, "sweep.json"))
	_, table, _ := strings.Cut(src, `<table id="scaling-table">`)
	table, _, _ = strings.Cut(table, "</table>")
	if !strings.Contains(table, `<th class="n">tps</th><th class="n">tps/cpu-s</th>`) || !strings.Contains(table, ">71223<") {
		t.Errorf("the scaling table has no tps/cpu-s column with the first step's 71223:\n%s", table)
	}
	src = string(fixturePage(t, "version1.json"))
	if strings.Contains(src, "tps/cpu-s") {
		t.Error("a sweep whose speedup is of throughput shows a tps/cpu-s column")
	}
}

// TestSweepsAgainstTheFirst: two sweeps of one workload (the lock study's
// master and patch) share a panel, and the second's throughput is drawn
// against the first's at each client count: 10 % more in every step here.
// A sweep of another workload is no change of them.
func TestSweepsAgainstTheFirst(t *testing.T) {
	var doc html.Doc
	for i, n := range []string{"sweep.json", "sweep.json", "hot-row.json"} {
		path := filepath.Join("testdata", n)
		f, err := result.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			path = filepath.Join("testdata", "patched.json")
			for k := range f.Steps {
				f.Steps[k].Summary.TPS *= 1.1
			}
		}
		doc.Files = append(doc.Files, compare.AnalyzeFile(compare.Input{Name: path, File: f}))
	}
	pg := writePage(t, doc)
	var data struct {
		Scaling struct {
			Series []struct {
				Label    string `json:"label"`
				Baseline bool   `json:"baseline"`
				Points   []struct {
					Vs *struct {
						Change float64 `json:"change"`
						Text   string  `json:"text"`
					} `json:"vs_baseline"`
				} `json:"points"`
			} `json:"series"`
		} `json:"scaling"`
	}
	if err := json.Unmarshal(embeddedData(t, pg), &data); err != nil {
		t.Fatal(err)
	}
	ss := data.Scaling.Series
	if len(ss) != 3 || !ss[0].Baseline || ss[1].Baseline {
		t.Fatalf("lines %+v, want three, the first the baseline", ss)
	}
	for _, p := range ss[1].Points {
		if p.Vs == nil || math.Abs(p.Vs.Change-0.1) > 1e-4 || p.Vs.Text != "+10.0%" {
			t.Errorf("%s against %s: %+v, want +10%% at every client count", ss[1].Label, ss[0].Label, p.Vs)
		}
	}
	for _, p := range append(ss[0].Points, ss[2].Points...) {
		if p.Vs != nil {
			t.Errorf("a change %+v of the baseline or of another workload", p.Vs)
		}
	}
	if !strings.Contains(string(pg), `id="scaling-change" data-chart="scaling" data-of="0 1 2" data-metric="change"`) {
		t.Error("the page has no chart of the changes against the first sweep")
	}
}
