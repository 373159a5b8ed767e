package html_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	stdhtml "html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/report/html"
	"github.com/pgscale/pgscale/internal/report/remedy"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// Strings a result file from someone else's machine might hold, each
// trying another way out of its context: a script element, an attribute
// with an event handler, the end of the style sheet and of a script.
const (
	evilTarget  = `<script>alert("target")</script>`
	evilQuery   = `SELECT 1 /* "><img src=x onerror=alert("query")> */`
	evilError   = `</style><script>alert("error")</script>`
	evilScript  = `"><img src=x onerror=alert("script")>.sql`
	evilSetting = `'</script><svg onload=alert("setting")>`
	evilFunc    = `<img src=x onerror=alert("flame")>`
	evilWindow  = `</title><script>alert("disturbance")</script>`
	evilBase    = `"><script>alert("baseline")</script>`
	evilCell    = `<svg onload=alert("matrix")>`
	evilProxy   = `"><img src=x onerror=alert("proxy file")>`
	evilStderr  = `</pre><script>alert("stderr")</script>`
)

var evil = []string{evilTarget, evilQuery, evilError, evilScript, evilSetting, evilFunc, evilWindow, evilCell, evilProxy, evilStderr}

// hostileDoc is a real result file (testdata/disturb.json) with hostile
// text in every kind of field the page shows, written with result.Write
// and read back with result.Read as a file from elsewhere would be, with a
// pprof file whose function name is hostile too.
func hostileDoc(t *testing.T) html.Doc {
	t.Helper()
	f, err := result.Read(filepath.Join("testdata", "disturb.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f.Target.Name = evilTarget
	f.Target.Description = evilTarget
	f.Target.Settings["work_mem"] = evilSetting
	// A proxy's rendered files and command line, and its standard error
	// in the reason it died.
	f.Target.Kind = "proxy"
	f.Target.Pooler = &result.Pooler{Program: "pgpool", Settings: map[string]string{}, Server: "host=/tmp port=5432", ServerKind: "ephemeral",
		Command: "pgpool -f " + evilProxy, Files: map[string]string{"pgpool.conf": "port = " + evilProxy}}
	f.Complete = false
	f.Reason = "pgpool (pid 4711) exited with status 3; its log ends: " + evilStderr
	f.Workload.Scripts[0].Name = evilScript
	f.Workload.Scripts[0].Source = evilError
	f.Command = append(f.Command, "--target", evilTarget)
	s := &f.Steps[0]
	s.Probes.Statements().Top[0].Query = evilQuery
	s.Errors = append(s.Errors, result.Error{Kind: "other", Message: evilError, Count: 1})
	s.Probes.Unavailable = append(s.Probes.Unavailable, result.ProbeUnavailable{Probe: "waits", Reason: evilError})
	s.Disturbances[0].Name = evilWindow
	s.Disturbances[0].Script = evilQuery
	if e := s.Disturbances[0].Effect; e != nil {
		e.Warnings = append(e.Warnings, evilError)
	}
	// Its work split by object and function (the split under the step,
	// the diagnosis at the top and the reason a function has no name)
	// holds the hostile name as the object, the function and the package.
	evilObject := "/usr/lib/postgresql/15/lib/" + evilFunc + ".so"
	s.Probes.SetProfile(&result.Profile{File: "evil.pb.gz", Samples: 10, Hz: 99, Work: 10,
		Objects: []result.ProfileObject{{Object: evilObject, Self: 10, Unnamed: 5,
			Symbols: &result.Symbols{Source: "dynamic symbols", Looked: []string{"/usr/lib/debug/" + evilFunc}, Package: evilFunc}}},
		Functions: []result.ProfileFunc{{Function: evilFunc, Object: evilObject, Self: 10, Total: 10}}})
	writeProfile(t, filepath.Join(dir, "evil.pb.gz"), evilFunc)
	path := filepath.Join(dir, "hostile.json")
	if err := result.Write(path, f); err != nil {
		t.Fatal(err)
	}
	back, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	// A suite's matrix, as a runner would hand it over, with the same
	// hostile text in every place it shows.
	m := html.Matrix{Title: evilTarget, Corner: evilWindow, Cols: []string{evilCell, "b"},
		Rows: []html.MatrixRow{{Label: evilQuery, Cells: []html.MatrixCell{
			{Change: -0.2, Lo: -0.3, Hi: -0.1, Confidence: 0.95, Text: evilCell, Regressed: true, Outside: true}, {Empty: true}}}}}
	doc := docOf(compare.Input{Name: path, File: back})
	doc.Matrices = []html.Matrix{m}
	return doc
}

// hostileAB is a real A/B run with a regression (testdata/abregress) whose
// targets are named with hostile text, the candidate's pprof-free steps
// holding a hostile error, written and read back, as pgscale report
// renders it with its comparison.
func hostileAB(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	rename := map[string]string{"base": evilBase, "slow": evilTarget}
	var in []compare.Input
	for _, n := range []string{"base", "slow"} {
		f, err := result.Read(filepath.Join("testdata", "abregress", n+".json"))
		if err != nil {
			t.Fatal(err)
		}
		f.Target.Name = rename[f.Target.Name]
		f.AB.Baseline = rename[f.AB.Baseline]
		for i := range f.AB.Targets {
			f.AB.Targets[i].Name = rename[f.AB.Targets[i].Name]
		}
		for i := range f.AB.Order {
			for j := range f.AB.Order[i] {
				f.AB.Order[i][j] = rename[f.AB.Order[i][j]]
			}
		}
		f.Workload.Name = evilWindow
		f.Steps[0].Errors = append(f.Steps[0].Errors, result.Error{Kind: "other", Message: evilError, Count: 1})
		path := filepath.Join(dir, n+".json")
		if err := result.Write(path, f); err != nil {
			t.Fatal(err)
		}
		back, err := result.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, compare.Input{Name: back.Target.Name, File: back, Path: path})
	}
	cmp, _, err := compare.OfRun(in, remedy.Say)
	if err != nil {
		t.Fatal(err)
	}
	if o := cmp.Outcome(); o != stats.Fail && o != stats.Inconclusive {
		t.Fatalf("the regression fixture neither failed its bounds nor was undecided (%s): the page would show no finding", cmp.Headline())
	}
	a := compare.Analyze(in, compare.Compared{Comparison: cmp})
	return writeReport(t, report.NewDoc(a))
}

// writeProfile writes a CPU profile of 10 samples in a function named fn,
// called from main.
func writeProfile(t *testing.T, path, fn string) {
	t.Helper()
	leaf := &profile.Function{ID: 1, Name: fn}
	root := &profile.Function{ID: 2, Name: "main"}
	m := &profile.Mapping{ID: 1, File: "/usr/lib/postgresql/15/bin/postgres"}
	l1 := &profile.Location{ID: 1, Mapping: m, Line: []profile.Line{{Function: leaf}}}
	l2 := &profile.Location{ID: 2, Mapping: m, Line: []profile.Line{{Function: root}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Sample:     []*profile.Sample{{Location: []*profile.Location{l1, l2}, Value: []int64{10}}},
		Function:   []*profile.Function{leaf, root},
		Location:   []*profile.Location{l1, l2},
		Mapping:    []*profile.Mapping{m},
	}
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(fh); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestHostileSource checks the page sources: no hostile string appears
// unescaped anywhere, and nothing but the data block is a script.
func TestHostileSource(t *testing.T) {
	checkSource(t, "sweep", string(writePage(t, hostileDoc(t))), evil)
	checkSource(t, "A/B", string(hostileAB(t)), []string{evilBase, evilTarget, evilError, evilWindow})
}

func checkSource(t *testing.T, name, src string, evil []string) {
	t.Helper()
	for _, s := range evil {
		if strings.Contains(src, s) {
			t.Errorf("%s: the page holds %q unescaped", name, s)
		}
	}
	// "onerror=" itself is in the page, as text: an attribute needs a tag.
	for _, tag := range []string{"<img", "<svg onload"} {
		if strings.Contains(src, tag) {
			t.Errorf("%s: the page holds %q", name, tag)
		}
	}
	checkScripts(t, name, src)
}

// checkScripts: a page holds the JSON data block and its own scripts, no
// other script element, and its Content-Security-Policy allows exactly
// those scripts, by their hashes.
func checkScripts(t *testing.T, name, src string) {
	t.Helper()
	csp := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(src)
	if csp == nil {
		t.Fatalf("%s: no Content-Security-Policy", name)
	}
	policy := stdhtml.UnescapeString(csp[1])
	scripts := regexp.MustCompile(`(?s)<script([^>]*)>(.*?)</script>`).FindAllStringSubmatch(src, -1)
	if n := strings.Count(src, "<script"); n != len(scripts) || n < 1 {
		t.Fatalf("%s: %d script elements, %d of them whole", name, n, len(scripts))
	}
	var want []string
	for i, sc := range scripts {
		if i == 0 {
			if sc[1] != ` type="application/json" id="pgscale-data"` {
				t.Errorf("%s: the first script element is <script%s>, not the data block", name, sc[1])
			}
			continue
		}
		if sc[1] != "" {
			t.Errorf("%s: a script element <script%s>", name, sc[1])
		}
		h := sha256.Sum256([]byte(sc[2]))
		want = append(want, "'sha256-"+base64.StdEncoding.EncodeToString(h[:])+"'")
	}
	allow := ""
	if len(want) > 0 {
		allow = "; script-src " + strings.Join(want, " ")
	}
	if p := "default-src 'none'; style-src 'unsafe-inline'" + allow; policy != p {
		t.Errorf("%s: the policy is %q, want %q: the page's own scripts and nothing else", name, policy, p)
	}
}

// TestHostileInBrowser opens the hostile page in Chromium: no dialog, no
// console message, no request, no element made from the data, and every
// hostile string shown as text and kept as data.
func TestHostileInBrowser(t *testing.T) {
	needBrowser(t)
	pg := writePage(t, hostileDoc(t))
	ctx, v := open(t, "hostile", pg, 1100, 900)
	if n := eval[int](t, ctx, `document.querySelectorAll("img, iframe, object, embed, [onload], [onerror]").length`); n != 0 {
		t.Errorf("%d elements made from the file's text", n)
	}
	ownScripts(t, ctx, pg)
	text := eval[string](t, ctx, `document.body.textContent`)
	for _, s := range evil {
		if !strings.Contains(text, s) {
			t.Errorf("the page does not show %q as text", s)
		}
	}
	// The charts name the target in their legends and titles, the flame
	// graph the function in its boxes, as text; hovering them says so.
	waitDrawn(t, ctx)
	chartText := eval[string](t, ctx, `[...document.querySelectorAll("div.uchart .u-label, div.uchart .u-title, div.flamegraph svg text")].map(e => e.textContent).join("\n")`)
	for _, s := range []string{evilTarget, evilFunc} {
		if !strings.Contains(chartText, s) {
			t.Errorf("no chart shows %q as text", s)
		}
	}
	if tip := hover(t, ctx, "scaling-tps", 0, 0.5, 0.5); !strings.Contains(tip, "\n"+evilTarget+": ") {
		t.Errorf("the scaling chart's tooltip says %q, not the target's name as text", tip)
	}
	// The disturbance window is at 1–2 s of the first step's 3.
	if tip := hover(t, ctx, "timeline-0-0", 0, 0.5, 0.5); !strings.Contains(tip, "during "+evilWindow+" (") {
		t.Errorf("the timeline's tooltip inside the window says %q, not the window's name as text", tip)
	}
	raw := eval[string](t, ctx, `document.getElementById("pgscale-data").textContent`)
	var data struct {
		Runs []struct {
			Files []struct {
				Target struct{ Name string } `json:"target"`
			} `json:"files"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(raw), &data); err != nil {
		t.Fatalf("data block: %v", err)
	}
	if got := data.Runs[0].Files[0].Target.Name; got != evilTarget {
		t.Errorf("data block target name %q, want %q", got, evilTarget)
	}
	if got := eval[string](t, ctx, `document.title`); !strings.Contains(got, evilTarget) {
		t.Errorf("title %q does not show the target name as text", got)
	}
	v.quiet(t)
}

// TestHostileABInBrowser opens the page of an A/B run whose target names
// are hostile: the comparison's headline, table and matrix show them as
// text, nothing runs, and every change keeps its interval on hover.
func TestHostileABInBrowser(t *testing.T) {
	needBrowser(t)
	pg := hostileAB(t)
	ctx, v := open(t, "hostile-ab", pg, 1100, 900)
	if n := eval[int](t, ctx, `document.querySelectorAll("img, iframe, object, embed, svg [onload], [onload], [onerror]").length`); n != 0 {
		t.Errorf("%d elements made from the files' text", n)
	}
	ownScripts(t, ctx, pg)
	// Legends and tooltips of the charts name the targets as text.
	waitDrawn(t, ctx)
	legends := eval[[]string](t, ctx, `[...document.querySelectorAll("#scaling-tps .u-label")].map(e => e.textContent)`)
	if len(legends) != 2 || legends[0] != evilBase || legends[1] != evilTarget {
		t.Errorf("the throughput chart's legend reads %q, want the targets' names as text", legends)
	}
	if tip := hover(t, ctx, "scaling-tps", 0, 0.98, 0.5); !strings.Contains(tip, "\n"+evilBase+": ") || !strings.Contains(tip, "\n"+evilTarget+": ") {
		t.Errorf("the throughput chart's tooltip says %q, not both targets' names as text", tip)
	}
	if tip := hover(t, ctx, "timeline-ab0-c1", 0, 0.05, 0.5); !strings.Contains(tip, evilBase+", ") {
		t.Errorf("the timeline's tooltip says %q, not the baseline's name as text", tip)
	}
	table := eval[string](t, ctx, `document.getElementById("comparison-table").textContent`)
	for _, s := range []string{evilBase, evilTarget} {
		if !strings.Contains(table, s) {
			t.Errorf("the comparison table does not show %q as text", s)
		}
	}
	if got := eval[string](t, ctx, `document.querySelector("#comparison p.headline").textContent`); !strings.Contains(got, "Compared "+evilTarget+" with "+evilBase) {
		t.Errorf("headline %q does not name the targets as text", got)
	}
	if got := eval[string](t, ctx, `document.querySelector("#matrix-comparison caption").textContent`); got != "Change against "+evilBase {
		t.Errorf("matrix caption %q", got)
	}
	titles := eval[[]string](t, ctx, `[...document.querySelectorAll("#comparison-table td.chg, #matrix-comparison td.chg")].map(td => td.title)`)
	if n := eval[int](t, ctx, `document.querySelectorAll("#comparison-table td.chg").length`); n != 8 || len(titles) <= 8 {
		t.Errorf("%d change cells in the table, want 8 (8 measures), and %d in the matrix, want some", n, len(titles)-n)
	}
	// Every change in the matrix links to its evidence card, which names
	// the targets as text.
	if bad := eval[[]string](t, ctx, `[...document.querySelectorAll("#matrix-comparison td.chg")].filter(td => { const a = td.querySelector("a"); return !a || !document.getElementById(a.hash.slice(1)) }).map(td => td.textContent)`); len(bad) > 0 {
		t.Errorf("matrix cells without evidence: %q", bad)
	}
	for _, ti := range titles {
		if !strings.Contains(ti, "95% interval") {
			t.Errorf("change cell without its interval on hover: %q", ti)
		}
	}
	// The fixture's 3 rounds cannot fail a bound: its regressions show
	// as failed or inconclusive, never passed.
	outside := eval[int](t, ctx, `document.querySelectorAll("#comparison-table td.chg.outside").length`)
	if outside == 0 && !strings.Contains(table, "inconclusive") || strings.Contains(table, "pass") {
		t.Errorf("the regressions are neither marked failed nor inconclusive: %d cells outside; table %q", outside, table)
	}
	v.quiet(t)
}

// ownScripts: the scripts in the page as Chromium has it are those of its
// source, the data block and the page's own, none added by the data.
func ownScripts(t *testing.T, ctx context.Context, src []byte) {
	t.Helper()
	got := eval[[]string](t, ctx, `[...document.scripts].map(s => s.type)`)
	n := strings.Count(string(src), "<script")
	if len(got) != n || got[0] != "application/json" {
		t.Errorf("scripts in the page: %q, want the JSON data block and the page's own %d", got, n-1)
	}
	for _, ty := range got[1:] {
		if ty != "" {
			t.Errorf("a script of type %q", ty)
		}
	}
}

// TestHarnessSeesTrouble proves the checks above can fail: a page that
// logs, throws, opens a dialog and asks for an image is caught on every
// count.
func TestHarnessSeesTrouble(t *testing.T) {
	needBrowser(t)
	bad := `<!DOCTYPE html><html><head><title>bad</title></head><body>
<script>console.log("hello"); alert("boo");</script>
<img src="http://127.0.0.1:9/x.png">
<script>setTimeout(() => { throw new Error("late") }, 10)</script>
<script type="application/json" id="pgscale-data">{}</script></body></html>`
	_, v := open(t, "bad", []byte(bad), 800, 600)
	seen := func() (logged, thrown bool) {
		for _, c := range v.console {
			logged = logged || strings.Contains(c, "hello")
			thrown = thrown || strings.Contains(c, "late")
		}
		return
	}
	for range 50 {
		v.mu.Lock()
		logged, thrown := seen()
		done := logged && thrown && len(v.requests) > 0 && len(v.dialogs) > 0
		v.mu.Unlock()
		if done {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.dialogs) == 0 {
		t.Error("the dialog went unseen")
	}
	if len(v.requests) == 0 {
		t.Error("the image request went unseen")
	}
	if logged, thrown := seen(); !logged || !thrown {
		t.Errorf("console messages seen: %s", fmt.Sprint(v.console))
	}
}
