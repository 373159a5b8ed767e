package report_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Every result file in testdata (real runs on this project's machine) is
// rendered in each format and compared with its golden file; a mismatch
// writes NAME.got-EXT beside it.
func TestGolden(t *testing.T) {
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
		for _, format := range []struct {
			ext string
			f   report.Format
		}{{"txt", report.Text}, {"md", report.Markdown}} {
			t.Run(name+"."+format.ext, func(t *testing.T) {
				var got bytes.Buffer
				report.File(&got, filepath.Base(path), f, format.f)
				golden := filepath.Join("testdata", name+"."+format.ext)
				if *update {
					if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -update to create it)", err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					gotPath := filepath.Join("testdata", name+".got-"+format.ext)
					os.WriteFile(gotPath, got.Bytes(), 0o644)
					t.Errorf("%s differs from %s (diff them; go test -update accepts)", gotPath, golden)
				}
			})
		}
	}
}

func TestDiagnosisLines(t *testing.T) {
	f, err := result.Read(filepath.Join("testdata", "hot-row.json"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	report.Diagnosis(&b, diagnose.Sweep(f))
	if !strings.Contains(b.String(), "lock-bound") || !strings.Contains(b.String(), "Lock:transactionid") {
		t.Errorf("diagnosis:\n%s", b.String())
	}
}
