package suite_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/suite"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

const good = `name: demo
targets: [a=settings:, b=settings:work_mem=8MB]
matrix:
  partitions: [0, 16]
  rows: [100, 10000]
  protocol: [simple, prepared]
setup: |
  CREATE TABLE t{{partitions}} (id int);
  INSERT INTO t{{partitions}} SELECT generate_series(1, {{rows}});
scripts:
  - sql: SELECT count(*) FROM t{{partitions}};
clients: [1, 2]
duration: 2s
rounds: 3
bounds:
  - tps=-5%
  - {bound: "p99@c=2=+20%", cells: "partitions=16"}
`

func TestParseAndCells(t *testing.T) {
	s, err := suite.Parse("demo.yaml", "", "demo", []byte(good), false)
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if len(cells) != 8 || cells[0].Key() != "partitions=0,rows=100,protocol=simple" || cells[7].Key() != "partitions=16,rows=10000,protocol=prepared" {
		t.Fatalf("cells %d: first %s, last %s", len(cells), cells[0].Key(), cells[len(cells)-1].Key())
	}
	if got := s.Expand(s.Setup, cells[5]); !strings.Contains(got, "CREATE TABLE t16") || !strings.Contains(got, "generate_series(1, 100)") {
		t.Errorf("setup of %s: %s", cells[5].Key(), got)
	}
	f, _ := suite.ParseOnly("partitions=16,rows=100|10000")
	only, err := s.Only(cells, f)
	if err != nil || len(only) != 4 {
		t.Errorf("--only: %d cells, %v", len(only), err)
	}
	if cells[3].Dir() != "004-partitions-0-rows-10000-protocol-prepared" {
		t.Errorf("dir %s", cells[3].Dir())
	}
	if len(s.Bounds) != 2 || !cells[4].Matches(s.Bounds[1].Where) || cells[0].Matches(s.Bounds[1].Where) {
		t.Errorf("bounds %+v", s.Bounds)
	}
}

// A target is a spec string, quoted or not, or a map: a name with a spec,
// or with a proxy's definition (inline, or its file beside the suite),
// each read as the --target spec it stands for.
func TestTargetMaps(t *testing.T) {
	src := strings.Replace(good, "targets: [a=settings:, b=settings:work_mem=8MB]", `targets:
  - a=settings:
  - {name: b, spec: "settings:work_mem=8MB"}
  - name: bouncer
    proxy:
      command: pgbouncer {{dir}}/pgbouncer.ini
      files:
        pgbouncer.ini: |
          [databases]
          * = host={{upstream.host}} port={{upstream.port}}
      of: a
      ready: 20s
  - {name: file, proxy: pool.yaml}`, 1)
	s, err := suite.Parse("demo.yaml", "/suites", "demo", []byte(src), false)
	if err == nil {
		t.Fatalf("a proxy file that does not exist was read: %v", s.Targets)
	}
	if !strings.Contains(err.Error(), "/suites/pool.yaml") {
		t.Errorf("error %v does not name the proxy file beside the suite", err)
	}
	src = strings.Replace(src, "  - {name: file, proxy: pool.yaml}", "", 1)
	if s, err = suite.Parse("demo.yaml", "/suites", "demo", []byte(src), false); err != nil {
		t.Fatal(err)
	}
	want := []string{"a=settings:", "b=settings:work_mem=8MB", `bouncer=proxy:{"command":`}
	if len(s.Targets) != 3 {
		t.Fatalf("targets %q", s.Targets)
	}
	for i, w := range want {
		if !strings.HasPrefix(s.Targets[i].String(), w) {
			t.Errorf("target %d is %q, want %q...", i, s.Targets[i], w)
		}
	}
	if !strings.Contains(s.Targets[2].String(), `"of":"a"`) || !strings.Contains(s.Targets[2].String(), `{{upstream.host}}`) {
		t.Errorf("the proxy's definition is not all there: %s", s.Targets[2])
	}
}

// A parameter stands in a target's spec (the pooler-ci preset's builds),
// and count: asks for instructions counted under Valgrind.
func TestTargetParamsAndCount(t *testing.T) {
	s, err := suite.Preset("pooler-ci", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := joinTargets(s.TargetSpecs()); got != "base=pgbouncer:,of='settings:replicas=1' cand=pgbouncer:,of='settings:replicas=1'" {
		t.Errorf("preset targets %s", got)
	}
	if err := s.SetParam("cand", "proxy:cand.yaml"); err != nil {
		t.Fatal(err)
	}
	if got := s.TargetSpecs()[1].String(); got != "cand=proxy:cand.yaml,of='settings:replicas=1'" {
		t.Errorf("with --param cand: %s", got)
	}
	src := strings.Replace(good, "rounds: 3\n", "rounds: 3\ncount: instructions\ntransactions: 100\n", 1)
	src = strings.Replace(src, "duration: 2s\n", "", 1)
	if s, err = suite.Parse("demo.yaml", "", "demo", []byte(src), false); err != nil || s.Count != (probeopt.Count{Instructions: true}) {
		t.Errorf("count: instructions: %v, %+v", err, s)
	}
	src = strings.Replace(src, "count: instructions", "count: cycles", 1)
	if _, err = suite.Parse("demo.yaml", "", "demo", []byte(src), false); err == nil || !strings.Contains(err.Error(), "want instructions") {
		t.Errorf("count: cycles: %v", err)
	}
	// As run and ab take it: the cache simulation too.
	src = strings.Replace(src, "count: cycles", "count: instructions,cache", 1)
	if s, err = suite.Parse("demo.yaml", "", "demo", []byte(src), false); err != nil || s.Count != (probeopt.Count{Instructions: true, Cache: true}) {
		t.Errorf("count: instructions,cache: %v, %+v", err, s)
	}
}

// Every mistake is a usage error that names the file and the line of
// the mistake, found before anything runs.
func TestErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct {
		name, edit, want string
	}{
		{"unknown key", "duration: 2s\nlengthy: 3\n", "demo.yaml:14:1: "},
		{"unused axis", "  rows: [100, 10000]\n  zone: [a, b]\n", "demo.yaml:6:9: axis zone is used by no template"},
		{"unknown template", "  - sql: SELECT count(*) FROM t{{partitions}};\n  - sql: SELECT {{nope}};\n", "{{nope}} names no axis or parameter"},
		{"bound matching nothing", "  - tps=-5%\n  - tsp=-5%\n", "demo.yaml:17:5: "},
		{"bound at a missing step", "  - tps=-5%\n  - tps@c=8=-5%\n", "demo.yaml:17:5: "},
		{"bound cell that is no cell", "cells: \"partitions=16\"", "demo.yaml:16:5: cells: partitions=17 is no cell"},
		{"bad yaml", "clients: [1, 2]\n", "demo.yaml:"},
		{"bad target", "targets: [a=settings:, b=docker:x]", `demo.yaml:2:24: target "b=docker:x": unknown kind "docker"`},
		{"bad baseline", "baseline: zz", `demo.yaml:3:11: baseline "zz" names no target (targets: a, b)`},
		{"bad protocol", "protocol: [simple, prepared]", "protocol \"telepathy\""},
		{"unquoted target", "targets: [a=settings:, b=settings:work_mem=8MB]", "quote it"},
		{"target map without a name", "targets: [a=settings:, b=settings:work_mem=8MB]", "needs its name"},
		{"target map of two kinds", "targets: [a=settings:, b=settings:work_mem=8MB]", "keep one"},
		{"proxy with a bad template", "targets: [a=settings:, b=settings:work_mem=8MB]", "function \"nope\" not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := good
			switch tc.name {
			case "unknown key":
				src = strings.Replace(src, "duration: 2s\n", tc.edit, 1)
			case "unused axis":
				src = strings.Replace(src, "  rows: [100, 10000]\n", tc.edit, 1)
			case "unknown template":
				src = strings.Replace(src, "  - sql: SELECT count(*) FROM t{{partitions}};\n", tc.edit, 1)
			case "bound matching nothing", "bound at a missing step":
				src = strings.Replace(src, "  - tps=-5%\n  - {bound", tc.edit+"  - {bound", 1)
				src = strings.Replace(src, "  - {bound: \"p99@c=2=+20%\", cells: \"partitions=16\"}\n", "", 1)
			case "bound cell that is no cell":
				src = strings.Replace(src, tc.edit, "cells: \"partitions=17\"", 1)
				src = strings.Replace(src, "  - tps=-5%\n", "", 1)
			case "bad yaml":
				src = strings.Replace(src, tc.edit, "clients: [1, 2\n", 1)
			case "bad baseline":
				src = strings.Replace(src, "name: demo\ntargets: [a=settings:, b=settings:work_mem=8MB]\n", "name: demo\ntargets: [a=settings:, b=settings:work_mem=8MB]\n"+tc.edit+"\n", 1)
			case "bad target":
				src = strings.Replace(src, "targets: [a=settings:, b=settings:work_mem=8MB]", tc.edit, 1)
			case "unquoted target":
				// a=settings: alone reads as a map of one key and no value, and is taken as the spec.
				src = strings.Replace(src, tc.edit, "targets:\n  - a=settings:\n  - b=settings: work_mem=8MB", 1)
			case "target map without a name":
				src = strings.Replace(src, tc.edit, "targets:\n  - a=settings:\n  - spec: settings:work_mem=8MB", 1)
			case "target map of two kinds":
				src = strings.Replace(src, tc.edit, "targets:\n  - a=settings:\n  - {name: b, spec: 'settings:', proxy: p.yaml}", 1)
			case "proxy with a bad template":
				src = strings.Replace(src, tc.edit, "targets:\n  - a=settings:\n  - name: b\n    proxy:\n      command: pgbouncer {{nope}}/x.ini", 1)
			case "bad protocol":
				src = strings.Replace(src, tc.edit, "protocol: [simple, telepathy]", 1)
			}
			_, err := suite.Parse("demo.yaml", "", "demo", []byte(src), false)
			if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "demo.yaml:") {
				t.Errorf("error %v; want a usage error with %q", err, tc.want)
			}
			if err != nil && strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("want one line, got:\n%s", err)
			}
		})
	}
}

// Every preset parses, in full and in its quick variant, and can be
// shown.
func TestPresets(t *testing.T) {
	names := suite.Presets()
	if strings.Join(names, " ") != "extension-sweep fastpath pooler pooler-ci sinval" {
		t.Fatalf("presets %v", names)
	}
	for _, n := range names {
		for _, quick := range []bool{false, true} {
			s, err := suite.Preset(n, quick)
			if n == "pooler" && err != nil && strings.Contains(err.Error(), "pgbouncer") {
				t.Logf("pooler preset: %v (no pgbouncer: target in this build)", err)
				continue
			}
			if err != nil {
				t.Errorf("preset %s (quick %v): %v", n, quick, err)
				continue
			}
			if len(s.Cells()) == 0 || s.Description == "" {
				t.Errorf("preset %s: %d cells, description %q", n, len(s.Cells()), s.Description)
			}
		}
		if src, err := suite.PresetSource(n); err != nil || !strings.Contains(src, "quick:") {
			t.Errorf("preset %s has no quick variant: %v", n, err)
		}
	}
	if _, err := suite.Preset("nope", false); err == nil || !strings.Contains(err.Error(), "fastpath") {
		t.Errorf("unknown preset: %v", err)
	}
}

// joinTargets writes targets as --target would take them, space-separated.
func joinTargets(ts []target.Given) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.String())
	}
	return strings.Join(out, " ")
}

// A cells: entry gives the cells it matches targets of their own, in
// place of the suite's of the same names (the pooler-ci preset's
// load-balanced cell through balancing poolers), with the parameters'
// values in their templates, a parameter written {balancing: OTHER}
// deriving its target from OTHER's (the same pgbouncer balancing) until
// --param gives it one; --param of one of a given_together: group without
// the other is said, naming where the other stands, unless the other
// follows it.
func TestCellsOwnTargets(t *testing.T) {
	s, err := suite.Preset("pooler-ci", true)
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if gs, own := s.CellTargets(cells[0]); own || joinTargets(gs) != joinTargets(s.TargetSpecs()) {
		t.Errorf("cell %s: own %v, targets %s", cells[0].Key(), own, joinTargets(gs))
	}
	if err := s.SetParam("cand", "pgbouncer:src=/src/pgbouncer@v1.25.1,default_pool_size=4"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetParam("base_balanced", "proxy:bal.yaml"); err != nil {
		t.Fatal(err)
	}
	gs, own := s.CellTargets(cells[1])
	want := "base=proxy:bal.yaml,of='settings:replicas=1' cand=pgbouncer:of='settings:replicas=1',src=/src/pgbouncer@v1.25.1,balance=round-robin,default_pool_size=4"
	if !own || joinTargets(gs) != want {
		t.Errorf("cell %s: own %v, targets %s, want %s", cells[1].Key(), own, joinTargets(gs), want)
	}
	if notes := s.Apart([]string{"cand"}); len(notes) != 0 {
		t.Errorf("cand given, cand_balanced derived from it: notes %q", notes)
	}
	if notes := s.Apart([]string{"cand_balanced"}); len(notes) != 1 || !strings.HasPrefix(notes[0], "--param cand_balanced is given without cand, which pooler-ci takes with it") {
		t.Errorf("cand_balanced given alone: notes %q", notes)
	}
	if got := s.OwnKeys(); strings.Join(got, " ") != "workload=select-only" {
		t.Errorf("own keys %v", got)
	}
	notes := s.Apart([]string{"base", "cand", "cand_balanced"})
	if len(notes) != 1 || notes[0] != "--param base is given without base_balanced, which pooler-ci takes with it: in the cells workload=select-only, base is base_balanced, left at its default (proxy:bal.yaml): give --param base_balanced=... too" {
		t.Errorf("notes %q", notes)
	}
	for _, given := range [][]string{nil, {"base", "base_balanced"}, {"base", "base_balanced", "cand", "cand_balanced"}, {"base", "base_balanced", "cand"}} {
		if notes := s.Apart(given); len(notes) != 0 {
			t.Errorf("given %v: notes %q", given, notes)
		}
	}
}

// --matrix that leaves a cells: entry's where: or a bound's cells: no
// cell is said in a note each (the parts do nothing at those points), and
// nothing is said while a cell is left for them.
func TestUnmatchedAfterMatrix(t *testing.T) {
	src := good + "cells:\n  - where: partitions=16\n    targets: [\"b=settings:work_mem=16MB\"]\n"
	s, err := suite.Parse("demo.yaml", "", "demo", []byte(src), false)
	if err != nil {
		t.Fatal(err)
	}
	if notes := s.Unmatched(nil); len(notes) != 0 {
		t.Errorf("without --matrix: %q", notes)
	}
	if err := s.SetAxis("partitions", []string{"16", "64"}); err != nil {
		t.Fatal(err)
	}
	if notes := s.Unmatched([]string{"partitions=16,64"}); len(notes) != 0 {
		t.Errorf("partitions=16 still a cell: %q", notes)
	}
	if err := s.SetAxis("partitions", []string{"18"}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"demo: cells[0] (where: partitions=16) is for no cell after --matrix partitions=18: its targets are not used",
		"demo: the bound p99@c=2=+20% (cells: partitions=16) is for no cell after --matrix partitions=18: it bounds nothing",
	}
	if notes := s.Unmatched([]string{"partitions=18"}); strings.Join(notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(notes, "\n"), strings.Join(want, "\n"))
	}
}

// A cells: entry's mistakes are one line at its place, before anything
// runs: a where: naming no axis or no value of it, a target that is none
// of the suite's, a cell given a target twice, given_together: naming no
// parameter.
func TestCellsOwnTargetsErrors(t *testing.T) {
	base := good + "cells:\n  - where: partitions=16\n    targets: [\"b=settings:work_mem=16MB\"]\n"
	if s, err := suite.Parse("demo.yaml", "", "demo", []byte(base), false); err != nil {
		t.Fatal(err)
	} else if gs, own := s.CellTargets(s.Cells()[4]); !own || joinTargets(gs) != "a=settings: b=settings:work_mem=16MB" {
		t.Errorf("cell %s: %v %s", s.Cells()[4].Key(), own, joinTargets(gs))
	}
	for _, tc := range []struct{ name, edit, want string }{
		{"no axis", "where: zone=16", "demo.yaml:19:12: where: zone names no axis of demo (axes: partitions, rows, protocol)"},
		{"no value", "where: partitions=17", "demo.yaml:19:12: where: partitions=17 is not a value of the axis (0, 16)"},
		{"not --only's form", "where: partitions", "demo.yaml:19:12: where: \"partitions\" is not NAME=VALUE"},
		{"no where", "where: ''", "demo.yaml:19:10: cells: give where:"},
		{"not the suite's", "c=settings:", "demo.yaml:20:15: target c is none of the suite's targets (a, b)"},
		{"twice", "- where: rows=100\n    targets: [\"b=settings:\"]\n  - where: partitions=16", "demo.yaml:21:10: cell partitions=16,rows=100,protocol=simple gets target b from cells[0] too"},
		{"together", "given_together", "demo.yaml:21:18: given_together: x is no parameter of the suite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := base
			switch {
			case strings.HasPrefix(tc.edit, "where:"):
				src = strings.Replace(src, "where: partitions=16", tc.edit, 1)
			case tc.edit == "c=settings:":
				src = strings.Replace(src, "b=settings:work_mem=16MB", tc.edit, 1)
			case tc.edit == "given_together":
				src += "given_together: [[x, y]]\n"
			default:
				src = strings.Replace(src, "- where: partitions=16", tc.edit, 1)
			}
			_, err := suite.Parse("demo.yaml", "", "demo", []byte(src), false)
			if err == nil || !usage.Is(err) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v; want one usage line beginning %q", err, tc.want)
			}
		})
	}
}

// A parameter written {balancing: OTHER} is checked where it is written:
// OTHER must be a parameter with a value, the map have that one key; and a
// target it derives that pgscale cannot balance (a proxy: definition) is
// refused in one line saying which --param to give instead.
func TestBalancingParam(t *testing.T) {
	src := `name: bal
targets: ["p={{plain}},of='settings:replicas=1'"]
params: {plain: "pgbouncer:", balanced: {balancing: plain}}
matrix:
  workload: [tpcb-like, select-only]
scripts:
  - builtin: "{{workload}}"
cells:
  - where: workload=select-only
    targets: ["p={{balanced}},of='settings:replicas=1'"]
`
	s, err := suite.Parse("bal.yaml", "", "bal", []byte(src), false)
	if err != nil {
		t.Fatal(err)
	}
	if gs, _ := s.CellTargets(s.Cells()[1]); joinTargets(gs) != "p=pgbouncer:of='settings:replicas=1',balance=round-robin" {
		t.Errorf("derived: %s", joinTargets(gs))
	}
	for edit, want := range map[string]string{
		"{balancing: nope}":           "bal.yaml:3:41: parameter balanced: balancing: nope is no parameter of the suite",
		"{balancing: balanced}":       "bal.yaml:3:41: parameter balanced: balancing: balanced is derived itself",
		"{balancing: plain, also: 1}": "bal.yaml:3:41: parameter balanced: a parameter is a value, or {balancing: OTHER}",
		"{other: plain}":              "bal.yaml:3:41: parameter balanced: a parameter is a value, or {balancing: OTHER}",
	} {
		_, err := suite.Parse("bal.yaml", "", "bal", []byte(strings.Replace(src, "{balancing: plain}", edit, 1)), false)
		if err == nil || !usage.Is(err) || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v\nwant one usage line beginning %q", edit, err, want)
		}
	}
	// A plain value of a proxy definition cannot be balanced by pgscale.
	dir := t.TempDir()
	def := filepath.Join(dir, "plain.yaml")
	if err := os.WriteFile(def, []byte("command: pgbouncer {{dir}}/p.ini\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.SetParam("plain", "proxy:"+def); err != nil {
		t.Fatal(err)
	}
	gs, _ := s.CellTargets(s.Cells()[1])
	_, err = target.ParseGiven(gs, "", 1)
	want := "target p: balancing reads: pgscale derives that of pgbouncer: (its own pgbouncer) only, not of proxy:" + def + ": give --param balanced=proxy:FILE.yaml, a definition that balances reads over the replicas"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a proxy definition balanced: %v\nwant %s", err, want)
	}
}

// A suite that profiles (--profile, or profile: true) runs whole-step
// turns, as a profile is recorded over a target's whole step: its default
// slices give way; a file that asks for slices itself is refused at that
// line, in the file's words (a suite has no --slice flag to name).
func TestProfileTurns(t *testing.T) {
	s, err := suite.Parse("demo.yaml", "", "demo", []byte(good), false)
	if err != nil {
		t.Fatal(err)
	}
	if s.Slice == 0 || s.SliceGiven {
		t.Fatalf("the demo suite slices by default: slice %v, given %v", s.Slice, s.SliceGiven)
	}
	if err := s.SetProfile(); err != nil || !s.Profile || s.Slice != 0 {
		t.Errorf("--profile: %v, profile %v, slice %v: want whole-step turns", err, s.Profile, s.Slice)
	}
	s, err = suite.Parse("demo.yaml", "", "demo", []byte(good+"profile: true\n"), false)
	if err != nil || s.Slice != 0 {
		t.Errorf("profile: true: %v, slice %v", err, s.Slice)
	}
	sliced := strings.Replace(good, "rounds: 3\n", "rounds: 3\nslice: 200ms\n", 1)
	s, err = suite.Parse("demo.yaml", "", "demo", []byte(sliced), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{s.SetProfile(), func() error {
		_, err := suite.Parse("demo.yaml", "", "demo", []byte(sliced+"profile: true\n"), false)
		return err
	}()} {
		if err == nil || !usage.Is(err) || !strings.HasPrefix(err.Error(), "demo.yaml:15: slice: 200ms shares each step") || strings.Contains(err.Error(), "--slice") {
			t.Errorf("slice: 200ms with a profile: %v", err)
		}
	}
	zero := strings.Replace(good, "rounds: 3\n", "rounds: 3\nslice: 0\n", 1)
	if s, err := suite.Parse("demo.yaml", "", "demo", []byte(zero+"profile: true\n"), false); err != nil || s.Slice != 0 {
		t.Errorf("slice: 0 with profile: true: %v", err)
	}
}
