package report_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/golden"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/trend"
)

// TestMain gives the tests -update, which rewrites the golden files.
func TestMain(m *testing.M) {
	golden.RegisterFlag()
	os.Exit(m.Run())
}

// writeTo renders d in the named format on w.
func writeTo(w io.Writer, format string, d *report.Doc) error {
	f, err := report.Lookup(format)
	if err != nil {
		return err
	}
	return f.Write(w, d)
}

// write renders d in the named format.
func write(t *testing.T, format string, d *report.Doc) []byte {
	t.Helper()
	f, err := report.Lookup(format)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := f.Write(&b, d); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Every result file in testdata (real runs on this project's machine) is
// rendered as text and markdown and compared with its golden file.
func TestGoldenFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no result files in testdata: %v", err)
	}
	for _, path := range files {
		f, err := result.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		d := report.NewDoc(compare.Analyze([]compare.Input{{Name: filepath.Base(path), File: f}}, compare.Compared{}))
		for _, format := range []struct{ ext, name string }{{"txt", "text"}, {"md", "markdown"}} {
			t.Run(name+"."+format.ext, func(t *testing.T) {
				golden.Check(t, name+"."+format.ext, write(t, format.name, d))
			})
		}
	}
}

func TestDiagnosisLines(t *testing.T) {
	f, err := result.Read(filepath.Join("testdata", "hot-row.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := string(write(t, "text", report.NewDoc(compare.Analyze([]compare.Input{{Name: "hot-row.json", File: f}}, compare.Compared{}))))
	if !strings.Contains(out, "diagnosis:") || !strings.Contains(out, "lock-bound") || !strings.Contains(out, "Lock:transactionid") {
		t.Errorf("diagnosis:\n%s", out)
	}
}

// The registry names every format once, and each format refuses what it
// cannot show with an error rather than an empty file.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range report.Formats() {
		if seen[f.Name] || f.Usage == "" || f.Ext == "" || f.Write == nil || len(f.Kinds) == 0 {
			t.Errorf("format %+v: duplicate, undocumented, without a file name extension or renders nothing", f)
		}
		seen[f.Name] = true
	}
	if _, err := report.Lookup("md"); err != nil {
		t.Errorf("md is markdown: %v", err)
	}
	if _, err := report.Lookup("pdf"); err == nil || !strings.Contains(err.Error(), "text, markdown") {
		t.Errorf("Lookup(pdf) = %v, want the list of formats", err)
	}
	f, _ := report.Lookup("verdict")
	if err := f.Write(&bytes.Buffer{}, &report.Doc{}); err == nil {
		t.Errorf("the verdict format wrote a document with no comparison")
	}
	// A kind a format does not show is refused, not written empty.
	for _, f := range report.Formats() {
		if f.Shows(report.KindCheck) {
			continue
		}
		if err := f.Write(&bytes.Buffer{}, &report.Doc{Check: &trend.Check{}}); err == nil {
			t.Errorf("the %s format wrote a history check, which it does not show", f.Name)
		}
	}
}

// The connection phase of a large step is shown on stderr as it goes, with
// the digits grouped as a reader counts thousands.
func TestLiveConnecting(t *testing.T) {
	var out, errb bytes.Buffer
	l := &report.Live{Out: &out, Err: &errb}
	l.Observe(observe.Connecting{Clients: 10000, Connected: 3200})
	l.Observe(observe.Connecting{Clients: 1000000, Connected: 999, Target: "pooled"})
	if want := "connecting: 3 200 / 10 000\nconnecting: 999 / 1 000 000 (pooled)\n"; errb.String() != want || out.Len() > 0 {
		t.Errorf("stderr %q, stdout %q; want stderr %q", errb.String(), out.String(), want)
	}
}

// A sweep whose first step did far less per client than a later one —
// pooled.json with its 1-client throughput cut to 1500 tps, as a client
// bound by its own wake-up latency gets, its stored speedup and efficiency
// left as the file had them — reads against the step that does the most
// per client: no efficiency above 100 % in the table, that step marked
// as the baseline, and the diagnosis saying why (superlinear.txt.golden).
func TestSuperlinearReadsAgainstItsBaseline(t *testing.T) {
	f, err := result.Read(filepath.Join("testdata", "pooled.json"))
	if err != nil {
		t.Fatal(err)
	}
	f.Steps[0].Summary.TPS = 1500
	out := write(t, "text", report.NewDoc(compare.Analyze([]compare.Input{{Name: "pooled.json", File: f}}, compare.Compared{})))
	golden.Check(t, "superlinear.txt", out)
	for _, want := range []string{"baseline of speedup and efficiency)", "Speedup and efficiency are against 8 clients, not 1 client"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if f.Steps[1].Summary.Speedup != 2.333722614098192 {
		t.Errorf("the file read was changed")
	}
}
