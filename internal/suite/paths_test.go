package suite_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/suite"
	"github.com/pgscale/pgscale/internal/usage"
)

// writeSuite writes files into a fresh directory and returns it.
func writeSuite(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Every path in a suite file is relative to the file, whatever the working
// directory: a script's file, the setup's file, and the trees, patches and
// definitions its target specs name.
func TestPathsRelativeToTheSuiteFile(t *testing.T) {
	dir := writeSuite(t, map[string]string{
		"study/s.yaml": `targets: ["a=settings:,ext=ext@base+fix.patch,make=OPTFLAGS=", "b=src:pg@v1", "c=bin:build/bin", {name: d, spec: "settings:,ext=../other@v2"}]
setup: {file: setup.sql}
scripts:
  - file: knn.sql
rule: {measure: server-cpu/txn, clients: 2, against: 1, below: 20}
clients: [1, 2]
`,
		"study/knn.sql":   "SELECT 1;\n",
		"study/setup.sql": "CREATE TABLE t (id int);\n",
	})
	// From another directory (the test's own), by a path relative to it.
	rel, err := filepath.Rel(mustGetwd(t), filepath.Join(dir, "study", "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.ReadFile(rel, false)
	if err != nil {
		t.Fatal(err)
	}
	study := filepath.Join(dir, "study")
	want := []string{"a=settings:ext=" + study + "/ext@base+" + study + "/fix.patch,make=OPTFLAGS=", "b=src:" + study + "/pg@v1",
		"c=bin:" + study + "/build/bin", "d=settings:ext=" + dir + "/other@v2"}
	var got []string
	for _, g := range s.Targets {
		got = append(got, g.String())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("targets\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s.Setup != "CREATE TABLE t (id int);\n" || s.Dir != study {
		t.Errorf("setup %q, dir %s", s.Setup, s.Dir)
	}
	if src, err := s.ScriptSource(s.Scripts[0], s.Cells()[0]); err != nil || src != "SELECT 1;\n" {
		t.Errorf("script: %q, %v", src, err)
	}
	if len(s.Expect) != 1 {
		t.Errorf("rule: %+v", s.Expect)
	}
}

// A bundle states the suite's decision rules wherever it is read from:
// they are in its index, and a bundle from before that reads them from
// the suite's source relative to the suite file, or says why it cannot.
func TestBundleRulesWherever(t *testing.T) {
	src := "scripts:\n  - file: knn.sql\nrule: {measure: server-cpu/txn, clients: 2, against: 1, below: 20, decision: fine}\nclients: [1, 2]\n"
	dir := writeSuite(t, map[string]string{"study/s.yaml": src, "study/knn.sql": "SELECT 1;\n"})
	write := func(x *result.SuiteIndex) string {
		b := t.TempDir()
		x.Name, x.Source, x.Started, x.Finished = "s", src, time.Now(), time.Now()
		x.Targets = []result.ABTarget{{Name: "a", Spec: "a=settings:"}}
		x.Baseline = "a"
		if err := result.WriteSuiteIndex(b, x); err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := write(&result.SuiteIndex{File: "study/s.yaml", Rules: []result.SuiteRule{{Spec: "server-cpu/txn@c=2<c=1+20%", Decision: "fine"}}})
	got, err := suite.ReadBundle(b)
	if err != nil || len(got.Expect) != 1 || got.Expect[0].Decision != "fine" || got.Expect[0].Against != 1 {
		t.Errorf("rules from the index: %+v, %v", got, err)
	}
	old := write(&result.SuiteIndex{File: filepath.Join(dir, "study", "s.yaml")})
	if got, err := suite.ReadBundle(old); err != nil || len(got.Expect) != 1 {
		t.Errorf("rules from an older index's source: %v, %v", got, err)
	}
	gone := write(&result.SuiteIndex{File: filepath.Join(dir, "elsewhere", "s.yaml")})
	if _, err := suite.ReadBundle(gone); err == nil || !strings.Contains(err.Error(), "decision rules cannot be read") {
		t.Errorf("a source that no longer reads: %v, want an error, not a suite without rules", err)
	}
}

// A part of a suite file that is given and not used is an error at its
// line: a parameter no template names, a define no script reads, the
// weight of a lone script, protocol or scale given beside an axis of the
// same name, and with one target what only a comparison uses (a preset,
// which --target fills with targets to compare, gets a note instead).
func TestGivenAndUnused(t *testing.T) {
	base := "targets: [\"a=settings:\", \"b=settings:work_mem=8MB\"]\nscripts:\n  - sql: SELECT :x;\nclients: [1, 2]\n"
	for _, tc := range []struct{ name, src, want string }{
		{"param", base + "params:\n  nope: 1\n", "s.yaml:6:9: parameter nope is used by no template"},
		{"define", base + "defines:\n  x: 1\n  y: 2\n", "define y is read by no script"},
		{"weight", strings.Replace(base, "SELECT :x;", "SELECT 1;\n    weight: 3", 1), "weight: with one script"},
		{"protocol", base + "protocol: simple\nmatrix:\n  protocol: [simple, prepared]\n", "s.yaml:5:11: protocol: given, and an axis"},
	} {
		_, err := suite.Parse("s.yaml", "", "s", []byte(tc.src), false)
		if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	one := "targets: [\"a=settings:\"]\nscripts:\n  - sql: SELECT 1;\nclients: [1, 2]\nrounds: 4\nbounds: [tps=-5%]\n"
	s, err := suite.Parse("s.yaml", "", "s", []byte(one), false)
	if err != nil {
		t.Fatal(err)
	}
	if note, err := s.CheckTargets(1); err == nil || note != "" || !strings.HasPrefix(err.Error(), "s.yaml:5: rounds: given, but the suite runs on one target") {
		t.Errorf("one target with rounds: %q, %v", note, err)
	}
	if note, err := s.CheckTargets(2); err != nil || note != "" {
		t.Errorf("two targets (--target): %q, %v", note, err)
	}
	p, err := suite.Preset("fastpath", true)
	if err != nil {
		t.Fatal(err)
	}
	if note, err := p.CheckTargets(1); err != nil || !strings.Contains(note, "not used: rounds:") {
		t.Errorf("a preset alone: %q, %v", note, err)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
