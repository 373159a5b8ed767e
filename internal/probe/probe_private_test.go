package probe

import (
	"os"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/result"
)

func TestBackendKind(t *testing.T) {
	for title, want := range map[string]string{
		"postgres: postgres postgres [local] idle":               KindClientBackend,
		"postgres: bench app 10.0.0.7(53012) SELECT":             KindClientBackend,
		"postgres: main: bench app [local] UPDATE waiting":       KindClientBackend,
		"postgres: checkpointer":                                 KindBackground,
		"postgres: autovacuum worker pgbench":                    KindBackground,
		"postgres: pg_wait_sampling collector":                   KindBackground,
		"postgres: walsender repl 10.0.0.8(40000) streaming 0/1": KindBackground,
		"/usr/lib/postgresql/15/bin/postgres -D /tmp/x/data":     KindBackground,
	} {
		if got := backendKind(title); got != want {
			t.Errorf("backendKind(%q) = %q, want %q", title, got, want)
		}
	}
}

func TestFastPathSlots(t *testing.T) {
	for _, tc := range []struct{ ver, mlpt, want int }{
		{150018, 64, 16}, {170000, 1024, 16}, {180000, 64, 64}, {180000, 100, 128}, {180000, 10, 16}, {180000, 1 << 20, 16384},
	} {
		if got := FastPathSlots(tc.ver, tc.mlpt); got != tc.want {
			t.Errorf("FastPathSlots(%d, %d) = %d, want %d", tc.ver, tc.mlpt, got, tc.want)
		}
	}
}

// pg_wait_sampling 1.1 writes nothing for a backend that is not waiting:
// its time on CPU is the collector's rounds minus its waits.
func TestAttributeWaitSampling(t *testing.T) {
	profile := map[int]map[[2]string]int64{
		10: {{"Activity", "CheckpointerMain"}: 100},               // always waits: 100 rounds
		20: {{"Client", "ClientRead"}: 70, {"Lock", "tuple"}: 10}, // client backend: 20 on CPU
		30: {{"Client", "ClientRead"}: 5},                         // came and went: CPU unknown
		40: {{"Client", "ClientRead"}: 50},                        // a probe's backend
	}
	snaps := []map[int]backendInfo{
		{10: {kind: "checkpointer"}, 20: {kind: "client backend"}, 40: {kind: "client backend", probe: true}, 50: {kind: "client backend"}},
		{10: {kind: "checkpointer"}, 20: {kind: "client backend"}, 30: {kind: "client backend"}, 40: {kind: "client backend", probe: true}, 50: {kind: "client backend"}},
	}
	var w result.Waits
	attributeWaitSampling(&w, profile, snaps)
	// 20: 100-80 = 20 on CPU; 50 never waited: 100 on CPU.
	if w.CPUSamples != 120 {
		t.Errorf("cpu samples %d, want 120", w.CPUSamples)
	}
	if w.Samples != 120+75+10 {
		t.Errorf("samples %d, want 205", w.Samples)
	}
	if len(w.Events) != 2 || w.Events[0].Event != "ClientRead" || w.Events[0].Samples != 75 {
		t.Errorf("events %+v", w.Events)
	}
	if len(w.Background) != 1 || w.Background[0].Event != "CheckpointerMain" {
		t.Errorf("background %+v", w.Background)
	}
}

// A pid that a new process took during the step counts from zero, not as
// the old process's counters going backwards. Short-lived backends have
// used no whole clock tick of CPU, so only the start time tells them apart.
func TestGroupDeltaReusedPid(t *testing.T) {
	const root = 100
	a := map[int]taskSample{
		root: {start: 1, cpu: 1, run: 1, wait: 0.5},
		200:  {kind: KindClientBackend, start: 50, cpu: 0, run: 0.025, wait: 0.004, vcs: 40, ivcs: 3},
	}
	b := map[int]taskSample{
		root: {start: 1, cpu: 1, children: 0.02, run: 1, wait: 0.5},
		200:  {kind: KindClientBackend, start: 90, cpu: 0, run: 0.011, wait: 0.001, vcs: 5, ivcs: 1},
	}
	g, _, _ := groupDelta(a, b, root, nil)
	if g.CPUS < 0 || g.OnCPUS < 0 || g.RunQueueWaitS < 0 || g.VoluntaryCtx < 0 || g.InvoluntaryCtx < 0 {
		t.Fatalf("negative totals: %+v", g)
	}
	var backends result.ProcGroup
	for _, k := range g.ByKind {
		if k.Kind == KindClientBackend {
			backends = k
		}
	}
	if backends.OnCPUS != 0.011 || backends.RunQueueWaitS != 0.001 || backends.VoluntaryCtx != 5 || backends.InvoluntaryCtx != 1 {
		t.Errorf("client backends %+v: want the new process's own counters", backends)
	}
}

// The client backends' functions hold each recursive function once:
// callgrind's deeper levels ("relation_open'2") add their own counts to
// it, and its inclusive count is the outermost level's.
func TestClientFunctionsRecursion(t *testing.T) {
	f, err := os.Open("testdata/callgrind.out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := ParseCallgrind(f)
	if err != nil {
		t.Fatal(err)
	}
	raw := d.Functions(notCounted)
	fs := clientFunctions([]*CallgrindDump{d})
	var ownRaw, own uint64
	for _, c := range raw {
		ownRaw += c.Self.Ir
	}
	for fn, c := range fs {
		own += c.Self.Ir
		if strings.Contains(fn.Name, "'") {
			t.Errorf("%s: a recursion level named apart", fn.Name)
		}
	}
	if own != ownRaw {
		t.Errorf("own instructions %d after merging the levels, %d before", own, ownRaw)
	}
	ro := CallgrindFunc{Name: "relation_open", Object: "/usr/lib/postgresql/15/bin/postgres"}
	ro2 := CallgrindFunc{Name: "relation_open'2", Object: ro.Object}
	if got, want := fs[ro].Self.Ir, raw[ro].Self.Ir+raw[ro2].Self.Ir; got != want || raw[ro2].Self.Ir == 0 {
		t.Errorf("relation_open's own instructions %d, want %d (levels %d and %d)", got, want, raw[ro].Self.Ir, raw[ro2].Self.Ir)
	}
	if got := fs[ro].Inclusive.Ir; got != raw[ro].Inclusive.Ir {
		t.Errorf("relation_open with its callees %d, the outermost level %d", got, raw[ro].Inclusive.Ir)
	}
}

// perf's own line is the reason a profile is unavailable: the message
// under its "Error:" heading rather than the hint perf ends with, else
// its last line, never its progress lines (issue 46, finding 1).
func TestPerfError(t *testing.T) {
	for in, want := range map[string]string{
		"[ perf record: Woken up 1 times to write data ]\n[ perf record: Captured and wrote 0.001 MB x ]\n": "perf said nothing on its standard error",
		"": "perf said nothing on its standard error",
		"WARNING: The x file's data size field is 0 which is unexpected.\nWas the 'perf record' command properly terminated?\n":                                               "Was the 'perf record' command properly terminated?",
		"Error:\nThe sys_perf_event_open() syscall returned with 3 (No such process) for event (cpu-clock).\n/bin/dmesg | grep -i perf may provide additional information.\n": "The sys_perf_event_open() syscall returned with 3 (No such process) for event (cpu-clock).",
		"incompatible file format (rerun with -v to learn more)\n":                                                                                                            "incompatible file format (rerun with -v to learn more)",
	} {
		if got := perfError(in); got != want {
			t.Errorf("perfError(%q) = %q, want %q", in, got, want)
		}
	}
}
