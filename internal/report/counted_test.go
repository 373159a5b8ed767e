package report_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/golden"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// countedFunctions are a select-only transaction's functions, per
// transaction, with shared_buffers=12MB's extra buffer replacement on
// the candidate (side 1): what the why of a counted comparison names.
func countedFunctions(side, round int) []result.FunctionCount {
	fs := []result.FunctionCount{
		{Function: "PostgresMain", Object: "postgres", Self: 2000, Inclusive: 42800, EstCycles: 3000, EstCyclesInclusive: 73000},
		{Function: "ReadBufferExtended", Object: "postgres", Self: 100, Inclusive: 900, EstCycles: 150, EstCyclesInclusive: 1800},
		{Function: "ReadBuffer_common", Object: "postgres", Self: 300, Inclusive: 800, EstCycles: 500, EstCyclesInclusive: 1650},
		{Function: "StrategyGetBuffer", Object: "postgres", Self: 200, Inclusive: 300, EstCycles: 400, EstCyclesInclusive: 600},
		{Function: "0x00000000005c7730", Object: "postgres", Self: 100, Inclusive: 100, EstCycles: 150, EstCyclesInclusive: 150},
		{Function: "_bt_compare", Object: "postgres", Self: 40100, Inclusive: 40100, EstCycles: 68800, EstCyclesInclusive: 68800},
		{Function: "send", Object: "libc.so.6", Self: 10, Inclusive: 10, Syscalls: 1, SyscallsInclusive: 1, EstCycles: 50, EstCyclesInclusive: 50},
	}
	if side == 1 {
		for i, d := range []struct{ self, incl, cyc, cycIncl uint64 }{
			{0, 219, 0, 1900}, {0, 219, 0, 1900}, {61, 219, 300, 1900}, {118, 118, 1400, 1400}, {40, 40, 200, 200},
		} {
			fs[i].Self += d.self
			fs[i].Inclusive += d.incl
			fs[i].EstCycles += d.cyc
			fs[i].EstCyclesInclusive += d.cycIncl
		}
	}
	fs[5].Self += uint64(round % 2) // a trace of layout
	fs[5].Inclusive += uint64(round % 2)
	return fs
}

// counts are one step's counts: 3000 transactions of countedFunctions.
func counts(side, round int) *result.Instructions {
	const tx = 3000
	fs := countedFunctions(side, round)
	in := &result.Instructions{Tool: "callgrind", Transactions: tx, Kernel: "not counted", Without: "secure_read, pgstat_report_stat",
		ByKind: []result.InstructionGroup{{Kind: "client backend", Processes: 1}}}
	var cycles, sys uint64
	for i := range fs {
		f := &fs[i]
		in.ClientBackends += f.Self * tx
		cycles += f.EstCycles * tx
		sys += f.Syscalls * tx
		f.Self, f.Inclusive, f.EstCycles, f.EstCyclesInclusive = f.Self*tx, f.Inclusive*tx, f.EstCycles*tx, f.EstCyclesInclusive*tx
		f.Syscalls, f.SyscallsInclusive = f.Syscalls*tx, f.SyscallsInclusive*tx
	}
	clock := uint64(9 * tx)
	in.ClientSyscalls, in.ClientClockReads = sys+clock, &clock
	in.PerTxn = float64(in.ClientBackends) / tx
	in.Functions, in.FunctionsFloor = fs, 1
	ll := uint64(4*tx + 3*side*tx + round)
	in.Cache = &result.CacheSim{I1: "32768 B, 64 B, 8-way associative", D1: "32768 B, 64 B, 8-way associative", LL: "8388608 B, 64 B, 16-way associative",
		Model: "iai-callgrind's: L1 hits + 5 × LL hits + 35 × RAM hits (a model, not a measurement)", EstCycles: cycles, Events: map[string]uint64{
			"Ir": in.ClientBackends, "I1mr": uint64(1885*tx + round), "D1mr": uint64(500*tx + 40*side*tx + round), "D1mw": 40 * tx,
			"ILmr": 0, "DLmr": ll, "DLmw": 0, "Bcm": uint64(440*tx + round), "Bim": 8 * tx}}
	in.ByKind[0].Instructions, in.ByKind[0].Syscalls = in.ClientBackends, in.ClientSyscalls
	return in
}

// A comparison of servers counted under Valgrind: only the counted
// measures are compared, the time-based ones named as slowed by Valgrind;
// the why names the functions the change is in; a bound on throughput
// judges nothing and says why.
func TestGoldenCounted(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1}, 3)
	comparetest.Counted(inputs, counts)
	rep := comparetest.Compare(t, inputs, "tps=-5%", "instr/txn=+1%")
	if !rep.Counted || rep.Outcome() != stats.Pass {
		t.Fatalf("counted %v, outcome %v: %s", rep.Counted, rep.Outcome(), rep.Headline())
	}
	d := doc(nil, rep)
	golden.Check(t, "counted.txt", write(t, "text", d))
	golden.Check(t, "counted.md", write(t, "markdown", d))
	golden.Check(t, "counted.verdict.json", write(t, "verdict", d))
}

// A counted run without the cache simulation (--count instructions): no
// cache line under a step, no note on simulated caches, no miss measure —
// also from files written before the probe stopped recording an empty
// simulation ("cache (simulated): per transaction 0 L1 instruction
// misses ... caches I1 , D1 , LL").
func TestCountedWithoutCache(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1}, 3)
	comparetest.Counted(inputs, func(side, round int) *result.Instructions {
		in := counts(side, round)
		in.Cache = &result.CacheSim{Events: map[string]uint64{"Ir": in.ClientBackends}, Model: in.Cache.Model}
		return in
	})
	rep := comparetest.Compare(t, inputs)
	for _, format := range []string{"text", "markdown"} {
		for _, d := range []*report.Doc{{Analysis: &compare.Analysis{Comparison: rep}}, {Analysis: compare.Analyze(inputs[:1], compare.Compared{})}} {
			out := string(write(t, format, d))
			if !strings.Contains(out, "instr/txn") {
				t.Errorf("%s: no counted measure shown:\n%s", format, out)
			}
			for _, bad := range []string{"cache (simulated)", "caches I1", "simulation of one process's caches", "l1i-miss", "est-cycles"} {
				if strings.Contains(out, bad) {
					t.Errorf("%s: %q without the cache simulation:\n%s", format, bad, out)
				}
			}
		}
	}
}

// A comparison that counted the pooler alone (--count pooler): the notes
// say the pooler ran under Valgrind and its servers natively, not that
// the servers did.
func TestGoldenCountedPoolerAlone(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1}, 3)
	comparetest.Counted(inputs, func(side, round int) *result.Instructions {
		const tx = 3000
		perTxn := uint64(4230 + 11*side)
		fs := []result.FunctionCount{
			{Function: "sbuf_main_loop", Object: "pgbouncer", Self: 3600 * tx, Inclusive: 3600 * tx},
			{Function: "release_server", Object: "pgbouncer", Self: (perTxn - 3600) * tx, Inclusive: (perTxn - 3600) * tx},
		}
		return &result.Instructions{Tool: "callgrind", Transactions: tx, Kernel: "not counted", ByKind: []result.InstructionGroup{},
			Pooler:       &result.InstructionGroup{Kind: "pooler", Processes: 1, Instructions: perTxn*tx + uint64(round)},
			PoolerPerTxn: float64(perTxn*tx+uint64(round)) / tx, PoolerFunctions: fs, PoolerFunctionsFloor: 1}
	})
	rep := comparetest.Compare(t, inputs, "tps=-5%", "pooler-instr/txn=+1%")
	if rep.Valgrind != "the pooler" {
		t.Errorf("what ran under Valgrind: %q", rep.Valgrind)
	}
	out := write(t, "text", doc(nil, rep))
	if strings.Contains(string(out), "the servers ran under callgrind") || strings.Contains(string(out), "slows the server") {
		t.Errorf("the servers said to run under Valgrind:\n%s", out)
	}
	golden.Check(t, "counted-pooler.txt", out)
}
