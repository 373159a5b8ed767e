package probe_test

import (
	"os"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/probe"
)

// A real dump of a backend (two catalog queries, counted between a zero
// and a dump): the functions' own instructions add up to the totals, and
// the rebuilt stacks of the pprof profile add up to them too.
func TestParseCallgrind(t *testing.T) {
	f, err := os.Open("testdata/callgrind.out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := probe.ParseCallgrind(f)
	if err != nil {
		t.Fatal(err)
	}
	if d.PID != 22431 || d.Part != 1 || d.Trigger != "dump pgscale-1" {
		t.Errorf("pid %d, part %d, trigger %q", d.PID, d.Part, d.Trigger)
	}
	// Without the simulation callgrind writes its cache lines empty: no
	// caches (a counted run without ,cache printed "caches I1 , D1 , LL").
	if len(d.Caches) != 0 {
		t.Errorf("a dump without the cache simulation has caches %q", d.Caches)
	}
	ir := d.Totals["Ir"]
	if ir != 1372279 || d.Totals["sysCount"] != 81 {
		t.Fatalf("totals %v, want Ir 1372279 and 81 system calls", d.Totals)
	}
	if self := d.Total(); self.Ir != ir || self.Syscalls != 81 {
		t.Errorf("functions' own costs add up to %+v, totals say %d instructions and 81 system calls", self, ir)
	}
	// Every call goes to a function the dump holds: a callee's object
	// is named (cob=) for one call only, else it is the caller's.
	for k, v := range d.Calls {
		if _, ok := d.Self[k[1]]; !ok && v.Ir > 0 {
			t.Errorf("%s calls %s in %s, which the dump does not hold (%d instructions)", k[0].Name, k[1].Name, k[1].Object, v.Ir)
		}
	}
	pm := probe.CallgrindFunc{Name: "PostgresMain", Object: "/usr/lib/postgresql/15/bin/postgres"}
	if incl := d.Inclusive()[pm].Ir; incl < ir/2 || incl > ir {
		t.Errorf("PostgresMain with its callees: %d of %d instructions", incl, ir)
	}
	read := d.Inside("secure_read")
	if read.Ir == 0 || read.Ir > ir/5 || read.Syscalls == 0 {
		t.Errorf("inside secure_read: %+v", read)
	}
	prof, err := probe.CallgrindProfile([]*probe.CallgrindDump{d}, map[int]string{22431: "client backend"}, "1 client", "secure_read")
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	deepest := 0
	for _, s := range prof.Sample {
		sum += s.Value[0]
		deepest = max(deepest, len(s.Location))
		if got := s.Label["backend_type"]; len(got) != 1 || got[0] != "client backend" {
			t.Fatalf("sample labelled %v", s.Label)
		}
	}
	want := int64(ir - read.Ir)
	if d := sum - want; d < -int64(len(prof.Sample)) || d > int64(len(prof.Sample)) {
		t.Errorf("the profile's stacks hold %d instructions, the dump %d without secure_read", sum, want)
	}
	for _, s := range prof.Sample {
		for _, l := range s.Location {
			if n := l.Line[0].Function.Name; n == "secure_read" {
				t.Fatalf("%s in the profile: it was to be left out with what it called", n)
			}
		}
	}
	if deepest < 5 {
		t.Errorf("deepest stack %d frames: the call graph was not followed", deepest)
	}
}

// The functions of a dump without one and what it called: their own
// instructions add up to the dump's less what ran inside it, none of
// them is it, and a caller's inclusive count no longer holds it.
func TestCallgrindFunctions(t *testing.T) {
	f, err := os.Open("testdata/callgrind.out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := probe.ParseCallgrind(f)
	if err != nil {
		t.Fatal(err)
	}
	read := d.Inside("secure_read")
	want := d.Total().Ir - read.Ir
	fs := d.Functions([]string{"secure_read"})
	var self, sys uint64
	for fn, c := range fs {
		if fn.Name == "secure_read" {
			t.Fatalf("secure_read among the functions: %+v", c)
		}
		if c.Self.Ir > c.Inclusive.Ir {
			t.Errorf("%s: own %d instructions, with its callees %d", fn.Name, c.Self.Ir, c.Inclusive.Ir)
		}
		self += c.Self.Ir
		sys += c.Self.Syscalls
	}
	if diff := int64(self) - int64(want); diff < -int64(len(fs)) || diff > int64(len(fs)) {
		t.Errorf("the functions' own instructions add up to %d, the dump without secure_read holds %d", self, want)
	}
	if wantSys := d.Total().Syscalls - read.Syscalls; sys < wantSys-2 || sys > wantSys+2 {
		t.Errorf("the functions' own system calls add up to %d, want %d", sys, wantSys)
	}
	pm := probe.CallgrindFunc{Name: "PostgresMain", Object: "/usr/lib/postgresql/15/bin/postgres"}
	before := d.Inclusive()[pm].Ir
	if got := fs[pm].Inclusive.Ir; got+read.Ir > before+2 || got+read.Ir+2 < before {
		t.Errorf("PostgresMain with its callees: %d, before %d, secure_read %d", got, before, read.Ir)
	}
}

// A real dump with callgrind's cache and branch simulation (/bin/true
// under pgscale's options): every event is read per function, the
// functions' own counts add up to the dump's totals event by event, the
// simulated caches are the ones asked for, and the estimated cycles are
// iai-callgrind's model of the totals.
func TestParseCallgrindCache(t *testing.T) {
	f, err := os.Open("testdata/callgrind-cache.out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := probe.ParseCallgrind(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Caches["LL"]; got != "8388608 B, 64 B, 16-way associative" || d.Caches["I1"] != "32768 B, 64 B, 8-way associative" {
		t.Errorf("caches %v", d.Caches)
	}
	tot := d.Total()
	s := tot.Sim
	for name, got := range map[string]uint64{"Ir": tot.Ir, "sysCount": tot.Syscalls, "Dr": s.Dr, "Dw": s.Dw, "I1mr": s.I1mr, "D1mr": s.D1mr,
		"D1mw": s.D1mw, "ILmr": s.ILmr, "DLmr": s.DLmr, "DLmw": s.DLmw, "Bc": s.Bc, "Bcm": s.Bcm, "Bi": s.Bi, "Bim": s.Bim} {
		if want := d.Totals[name]; got != want || want == 0 {
			t.Errorf("%s: the functions' own counts add up to %d, the totals say %d", name, got, want)
		}
	}
	acc := tot.Ir + s.Dr + s.Dw
	want := (acc - s.L1Misses()) + 5*(s.L1Misses()-s.LLMisses()) + 35*s.LLMisses()
	if got := tot.EstCycles(); got != want || got <= acc {
		t.Errorf("estimated cycles %d, want %d (more than the %d accesses)", got, want, acc)
	}
	var sum probe.Cost
	for _, c := range d.Functions(nil) {
		sum.Ir += c.Self.Ir
		sum.Sim.DLmr += c.Self.Sim.DLmr
	}
	if sum.Ir != tot.Ir || sum.Sim.DLmr != s.DLmr {
		t.Errorf("Functions: own instructions %d and LL data read misses %d, the dump %d and %d", sum.Ir, sum.Sim.DLmr, tot.Ir, s.DLmr)
	}
}

// A backend counted again after it waited in secure_read with counting
// off: callgrind's shadow stack still holds that frame, so the calls of
// the new window are one recursion level deeper ("secure_read'2"). They
// are left out as secure_read is, with what they called.
func TestCallgrindExcludesDeeperLevels(t *testing.T) {
	dump := `# callgrind format
version: 1
positions: line
events: Ir sysCount
desc: Trigger: dump x

ob=(1) postgres
fl=(1) postgres.c
fn=(1) PostgresMain'2
0 100
cfn=(2) secure_read'2
calls=1 0
0 50 1
cfn=(3) exec_simple_query
calls=1 0
0 1000

fn=(2)
0 20
cfn=(4) recv
calls=1 0
0 30 1

fn=(4)
0 30 1

fn=(3)
0 1000
`
	d, err := probe.ParseCallgrind(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	if in := d.Inside("secure_read"); in.Ir != 50 || in.Syscalls != 1 {
		t.Errorf("inside secure_read (at level 2): %+v, want 50 instructions and 1 system call", in)
	}
	var kept uint64
	for f, c := range d.Functions([]string{"secure_read"}) {
		if f.Name == "recv" || strings.HasPrefix(f.Name, "secure_read") {
			t.Errorf("%s kept: %+v", f.Name, c)
		}
		kept += c.Self.Ir
	}
	if kept != 1100 {
		t.Errorf("%d instructions kept, want 1100 (PostgresMain and exec_simple_query)", kept)
	}
}

// A dump that --dump-before=FUNC asked for (a part of a Google Benchmark
// program's process, the loop of BM_Sum as callgrind 3.19 wrote it): its
// trigger names the option whole, though the line holds an "=", and the
// command line's "=" do not make header lines of their own.
func TestParseCallgrindDumpBefore(t *testing.T) {
	dump := `# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 9995
cmd:  ./bench --benchmark_format=json --benchmark_filter=^BM_Sum/1000$
part: 10
thread: 1

desc: Trigger: --dump-before=benchmark::State::FinishKeepRunning()

positions: line
events: Ir
summary: 37420014

ob=(9) /tmp/gb/bench
fl=(180) ???
fn=(4476) BM_Sum(benchmark::State&)
0 37420014

totals: 37420014
`
	d, err := probe.ParseCallgrind(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	if d.PID != 9995 || d.Part != 10 || d.Trigger != "--dump-before=benchmark::State::FinishKeepRunning()" || d.Total().Ir != 37420014 {
		t.Errorf("pid %d, part %d, trigger %q, %d instructions", d.PID, d.Part, d.Trigger, d.Total().Ir)
	}
}
