package html_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/pgscale/pgscale/internal/report/html"
	"github.com/pgscale/pgscale/internal/result"
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
)

var evil = []string{evilTarget, evilQuery, evilError, evilScript, evilSetting, evilFunc, evilWindow}

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
	f.Workload.Scripts[0].Name = evilScript
	f.Workload.Scripts[0].Source = evilError
	f.Command = append(f.Command, "--target", evilTarget)
	s := &f.Steps[0]
	s.Probes.Statements.Top[0].Query = evilQuery
	s.Errors = append(s.Errors, result.Error{Kind: "other", Message: evilError, Count: 1})
	s.Probes.Unavailable = append(s.Probes.Unavailable, result.ProbeUnavailable{Probe: "waits", Reason: evilError})
	s.Disturbances[0].Name = evilWindow
	s.Disturbances[0].Script = evilQuery
	if e := s.Disturbances[0].Effect; e != nil {
		e.Warnings = append(e.Warnings, evilError)
	}
	s.Probes.Profile = &result.Profile{File: "evil.pb.gz", Samples: 10}
	writeProfile(t, filepath.Join(dir, "evil.pb.gz"), evilFunc)
	path := filepath.Join(dir, "hostile.json")
	if err := result.Write(path, f); err != nil {
		t.Fatal(err)
	}
	back, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return html.Doc{Files: []html.NamedFile{{Name: path, File: back}}}
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

// TestHostileSource checks the page source: no hostile string appears
// unescaped anywhere, and nothing but the data block is a script.
func TestHostileSource(t *testing.T) {
	src := string(writePage(t, hostileDoc(t)))
	for _, s := range evil {
		if strings.Contains(src, s) {
			t.Errorf("the page holds %q unescaped", s)
		}
	}
	// "onerror=" itself is in the page, as text: an attribute needs a tag.
	for _, tag := range []string{"<img", "<script>", "<svg onload"} {
		if strings.Contains(src, tag) {
			t.Errorf("the page holds %q", tag)
		}
	}
	if n := strings.Count(src, "<script"); n != 1 {
		t.Errorf("%d script elements, want only the JSON data block", n)
	}
}

// TestHostileInBrowser opens the hostile page in Chromium: no dialog, no
// console message, no request, no element made from the data, and every
// hostile string shown as text and kept as data.
func TestHostileInBrowser(t *testing.T) {
	needBrowser(t)
	ctx, v := open(t, "hostile", writePage(t, hostileDoc(t)), 1100, 900)
	if n := eval[int](t, ctx, `document.querySelectorAll("img, iframe, object, embed, [onload], [onerror]").length`); n != 0 {
		t.Errorf("%d elements made from the file's text", n)
	}
	if got := eval[[]string](t, ctx, `[...document.scripts].map(s => s.type)`); len(got) != 1 || got[0] != "application/json" {
		t.Errorf("scripts in the page: %q, want only the JSON data block", got)
	}
	text := eval[string](t, ctx, `document.body.textContent`)
	for _, s := range evil {
		if !strings.Contains(text, s) {
			t.Errorf("the page does not show %q as text", s)
		}
	}
	svgText := eval[string](t, ctx, `[...document.querySelectorAll("svg text, svg title")].map(e => e.textContent).join("\n")`)
	for _, s := range []string{evilTarget, evilFunc} {
		if !strings.Contains(svgText, s) {
			t.Errorf("no chart shows %q as text", s)
		}
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
