package probe_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pgscale/pgscale/internal/probe"
)

func TestParsePerfScript(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "perf-script.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := probe.ParsePerfScript(f, map[int]string{4242: probe.KindClientBackend}, "8 clients", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 3 || p.Period != 10101010 {
		t.Fatalf("%d samples, period %d", len(p.Sample), p.Period)
	}
	s := p.Sample[0]
	if got := s.Location[0].Line[0].Function.Name; got != "hash_search_with_hash_value" {
		t.Errorf("leaf %q", got)
	}
	if got := s.Location[1].Line[0].Function.Name; got != "[postgres]" {
		t.Errorf("unknown frame named %q, want [postgres]", got)
	}
	if s.Label["backend_type"][0] != probe.KindClientBackend || s.NumLabel["pid"][0] != 4242 || s.Label["step"][0] != "8 clients" {
		t.Errorf("labels %v %v", s.Label, s.NumLabel)
	}
	last := p.Sample[2]
	if last.Label["comm"][0] != "pg wait sampler" || last.Label["backend_type"][0] != "exited" {
		t.Errorf("comm with spaces or unknown pid: %v", last.Label)
	}
	if s.Location[2] != p.Sample[1].Location[1] {
		t.Error("the same function in the same file is not one location")
	}
}
