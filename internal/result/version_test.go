package result_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pgscale/pgscale/internal/result"
)

// A file written by pgscale before probes existed is still read.
func TestReadsVersion1(t *testing.T) {
	f, err := result.Read(filepath.Join("testdata", "version1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 1 || len(f.Steps) == 0 || f.Steps[0].Probes != nil || f.Diagnosis != nil {
		t.Errorf("version %d, %d steps, probes %v, diagnosis %v", f.Version, len(f.Steps), f.Steps[0].Probes, f.Diagnosis)
	}
}

// Writing always writes the current version, which Read accepts.
func TestWriteIsCurrentVersion(t *testing.T) {
	f, err := result.Read(filepath.Join("testdata", "version1.json"))
	if err != nil {
		t.Fatal(err)
	}
	f.Steps[0].Probes = &result.Probes{ElapsedS: 1}
	f.Steps[0].Probes.SetCounters(&result.Counters{Reason: "not supported"})
	path := filepath.Join(t.TempDir(), "r.json")
	if err := result.Write(path, f); err != nil {
		t.Fatal(err)
	}
	back, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Version != result.Version || back.Steps[0].Probes == nil || back.Steps[0].Probes.Counters().Supported {
		t.Errorf("read back version %d, probes %+v", back.Version, back.Steps[0].Probes)
	}
}

// The schema holds the probes to their contract: hardware counters that
// are not supported carry a reason and no figures (never 0).
func TestSchemaChecksProbes(t *testing.T) {
	f, err := result.Read(filepath.Join("testdata", "version1.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*result.Counters{{Supported: false}, {Supported: false, Reason: "x", Cycles: 1}, {Supported: true}} {
		f.Steps[0].Probes = &result.Probes{ElapsedS: 1}
		f.Steps[0].Probes.SetCounters(c)
		if err := result.Write(filepath.Join(t.TempDir(), "r.json"), f); err == nil {
			t.Errorf("counters %+v written", c)
		}
	}
	f.Steps[0].Probes = &result.Probes{ElapsedS: 1}
	f.Steps[0].Probes.SetProcess(&result.ProcessStats{CPUs: 2, Host: result.HostStat{BusyShare: 1.5}})
	if err := result.Write(filepath.Join(t.TempDir(), "r.json"), f); err == nil {
		t.Error("a busy share of 150% was written")
	}
}

// A file written before each probe's evidence was registered by name
// (testdata/version2-probes.json, by the pgscale whose Probes had a field
// per probe) reads, holds every probe's evidence, and writes back byte
// for byte: the evidence was already a property named by its probe.
func TestEvidenceByNameReadsOlderFiles(t *testing.T) {
	in := filepath.Join("testdata", "version2-probes.json")
	f, err := result.Read(in)
	if err != nil {
		t.Fatal(err)
	}
	p := f.Steps[0].Probes
	if p.Process() == nil || p.Counters() == nil || p.Waits() == nil || p.Locks() == nil || p.Statements() == nil {
		t.Fatalf("evidence read: process %v, counters %v, waits %v, locks %v, statements %v",
			p.Process(), p.Counters(), p.Waits(), p.Locks(), p.Statements())
	}
	out := filepath.Join(t.TempDir(), "again.json")
	if err := result.Write(out, f); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(in)
	b, _ := os.ReadFile(out)
	if !bytes.Equal(a, b) {
		t.Errorf("written again, the file differs (%d bytes, was %d)", len(b), len(a))
	}
}
