package compare

import (
	"math"
	"strconv"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// MeasureDef is a measure an A/B comparison looks at: how to read its value
// from one step of a result file, and which direction is better.
type MeasureDef struct {
	// Name is the measure's name as bounds use it ("tps", "p99").
	Name string
	// Unit is the unit of Value, for display.
	Unit string
	// Direction says which way is better.
	Direction stats.Direction
	// Value reads the measure from a step; NaN when the step lacks it.
	Value func(*result.Step) float64
	// Unsupported, when set, says why a step lacks the measure because the
	// machine cannot measure it (no hardware counters); "" otherwise.
	Unsupported func(*result.Step) string
	// Counted marks a measure counted under Valgrind (--count): a count,
	// not a time, which Valgrind's slowness leaves alone. A comparison of
	// counted runs compares these alone.
	Counted bool
	// MinChange is the measure's smallest change of interest by default
	// (stats.Measure.MinChange): a significant change below it is
	// negligible. 0 for none.
	MinChange float64
	// Timing, when set, says why the measure depends on timing at a
	// client count ("" where it does not): stats.Measure.Timing, whose
	// bounds for every step apply there only where the runner's spread
	// can decide them.
	Timing func(clients int) string
}

// Measure is the measure's stats.Measure at a step ("c=4").
func (md MeasureDef) Measure(step string) stats.Measure {
	m := stats.Measure{Name: md.Name, Step: step, Unit: md.Unit, Direction: md.Direction, MinChange: md.MinChange, Counted: md.Counted}
	if md.Timing != nil {
		m.Timing = md.Timing(clientsOf(step))
	}
	return m
}

// poolerBatching is why the pooler's instructions per transaction depend
// on timing with more than one client: how many clients' packets one turn
// of its event loop serves moves with how they bunch (±4–5 % at 4 clients
// through pgbouncer 1.18, against ±0.1 % at one: docs/counting-instructions.md).
func poolerBatching(clients int) string {
	if clients > 1 {
		return "event-loop batching: how many clients' packets one turn of the pooler's event loop serves moves with timing"
	}
	return ""
}

// registered are the measures a file of their own adds (its evidence's
// measures, registered from an init function by RegisterMeasure), after
// the built-in ones; filled when the program starts, only read after.
var registered []MeasureDef

// registerMeasure adds a measure after the built-in ones: a probe's
// measures live in their own file (measure_NAME.go), which calls it from
// an init function, so adding them changes no other file.
func registerMeasure(md MeasureDef) {
	for _, m := range registered {
		if m.Name == md.Name {
			panic("compare: measure " + md.Name + " registered twice")
		}
	}
	registered = append(registered, md)
}

// Measures returns the measures compared per step, in report order:
// throughput, median and 99th percentile latency, the load generator's CPU
// per transaction, and what each transaction cost the server — CPU (and
// its user and kernel parts), context switches, a pooler's CPU, hardware
// cycles and instructions — and with --count the client backends' counts
// under Valgrind: instructions, system calls and clock reads, and with
// the cache simulation L1 instruction and data misses, last-level misses,
// mispredicted branches and estimated cycles. The server's costs come
// from the process probe with whole-step turns, and from the slice meter
// in slices (diagnose.Compute); a step without them lacks those measures.
// The measures registered from their own files follow.
func Measures() []MeasureDef {
	fig := func(read func(diagnose.Figures) (float64, bool)) func(*result.Step) float64 {
		return func(s *result.Step) float64 {
			if v, ok := read(diagnose.Compute(*s)); ok {
				return v
			}
			return math.NaN()
		}
	}
	counter := func(pick func(*result.Counters) uint64) func(*result.Step) float64 {
		return func(s *result.Step) float64 {
			if s.Probes == nil || s.Probes.Counters() == nil || !s.Probes.Counters().Supported {
				return math.NaN()
			}
			f := diagnose.Compute(*s)
			if tx := f.TPS * f.ElapsedS; tx > 0 {
				return float64(pick(s.Probes.Counters())) / tx
			}
			return math.NaN()
		}
	}
	noCounters := func(s *result.Step) string {
		if s.Probes != nil && s.Probes.Counters() != nil && !s.Probes.Counters().Supported {
			return s.Probes.Counters().Reason
		}
		return ""
	}
	return append([]MeasureDef{
		{Name: "tps", Unit: "txn/s", Direction: stats.HigherIsBetter, Value: func(s *result.Step) float64 { return s.Summary.TPS }},
		{Name: "p50", Unit: "ms", Direction: stats.LowerIsBetter, Value: func(s *result.Step) float64 { return s.Summary.Latency.P50Ms }},
		{Name: "p99", Unit: "ms", Direction: stats.LowerIsBetter, Value: func(s *result.Step) float64 { return s.Summary.Latency.P99Ms }},
		{Name: "client-cpu/txn", Unit: "µs", Direction: stats.LowerIsBetter, Value: func(s *result.Step) float64 {
			if s.Summary.ClientCPU.PerTxnUS <= 0 {
				return math.NaN()
			}
			return s.Summary.ClientCPU.PerTxnUS
		}},
		{Name: "server-cpu/txn", Unit: "µs", Direction: stats.LowerIsBetter, Value: fig(func(f diagnose.Figures) (float64, bool) {
			return f.ServerCPUPerTxnUS, f.HasServer && f.ServerCPUPerTxnUS > 0
		})},
		{Name: "server-user/txn", Unit: "µs", Direction: stats.LowerIsBetter, Value: fig(func(f diagnose.Figures) (float64, bool) {
			return f.ServerUserPerTxnUS, f.HasServerSplit && f.ServerUserPerTxnUS > 0
		})},
		{Name: "server-sys/txn", Unit: "µs", Direction: stats.LowerIsBetter, Value: fig(func(f diagnose.Figures) (float64, bool) {
			return f.ServerSysPerTxnUS, f.HasServerSplit && f.ServerSysPerTxnUS > 0
		})},
		{Name: "server-ctx/txn", Unit: "switches", Direction: stats.LowerIsBetter, Value: fig(func(f diagnose.Figures) (float64, bool) {
			return f.ServerCtxPerTxn, f.HasServer && f.ServerCtxPerTxn > 0
		})},
		{Name: "pooler-cpu/txn", Unit: "µs", Direction: stats.LowerIsBetter, Value: fig(func(f diagnose.Figures) (float64, bool) {
			return f.PoolerCPUPerTxnUS, f.HasPooler && f.PoolerCPUPerTxnUS > 0
		})},
		{Name: "pooler-ctx/txn", Unit: "switches", Direction: stats.LowerIsBetter, Value: fig(func(f diagnose.Figures) (float64, bool) {
			return f.PoolerCtxPerTxn, f.HasPooler && f.PoolerCtxPerTxn > 0
		})},
		{Name: "cycles/txn", Unit: "cycles", Direction: stats.LowerIsBetter, Value: counter(func(c *result.Counters) uint64 { return c.Cycles }), Unsupported: noCounters},
		{Name: "instructions/txn", Unit: "instructions", Direction: stats.LowerIsBetter, Value: counter(func(c *result.Counters) uint64 { return c.Instructions }), Unsupported: noCounters},
		{Name: "instr/txn", Unit: "instructions", Direction: stats.LowerIsBetter, Counted: true, MinChange: minInstructions,
			Value: counted(func(i *result.Instructions) float64 { return i.PerTxn })},
		{Name: "syscalls/txn", Unit: "calls", Direction: stats.LowerIsBetter, Counted: true, MinChange: minCalls,
			Value: counted(func(i *result.Instructions) float64 {
				n := i.ClientSyscalls
				if i.ClientClockReads != nil {
					n -= min(n, *i.ClientClockReads)
				}
				return float64(n) / float64(i.Transactions)
			})},
		{Name: "clock-reads/txn", Unit: "calls", Direction: stats.LowerIsBetter, Counted: true, MinChange: minCalls,
			Value: counted(func(i *result.Instructions) float64 {
				if i.ClientClockReads == nil {
					return math.NaN()
				}
				return float64(*i.ClientClockReads) / float64(i.Transactions)
			})},
		{Name: "l1i-miss/txn", Unit: "misses", Direction: stats.LowerIsBetter, Counted: true, MinChange: minMisses,
			Value: simulated(func(c *result.CacheSim) uint64 { return c.Events["I1mr"] })},
		{Name: "l1d-miss/txn", Unit: "misses", Direction: stats.LowerIsBetter, Counted: true, MinChange: minMisses,
			Value: simulated(func(c *result.CacheSim) uint64 { return c.Events["D1mr"] + c.Events["D1mw"] })},
		{Name: "ll-miss/txn", Unit: "misses", Direction: stats.LowerIsBetter, Counted: true, MinChange: minMisses,
			Value: simulated(func(c *result.CacheSim) uint64 { return c.Events["ILmr"] + c.Events["DLmr"] + c.Events["DLmw"] })},
		{Name: "branch-miss/txn", Unit: "misses", Direction: stats.LowerIsBetter, Counted: true, MinChange: minMisses,
			Value: simulated(func(c *result.CacheSim) uint64 { return c.Events["Bcm"] + c.Events["Bim"] })},
		{Name: "est-cycles/txn", Unit: "cycles, model", Direction: stats.LowerIsBetter, Counted: true, MinChange: minCycles,
			Value: simulated(func(c *result.CacheSim) uint64 { return c.EstCycles })},
		{Name: "pooler-instr/txn", Unit: "instructions", Direction: stats.LowerIsBetter, Counted: true, MinChange: minInstructions,
			Value: counted(func(i *result.Instructions) float64 { return i.PoolerPerTxn }), Timing: poolerBatching},
	}, registered...)
}

// The smallest changes of interest of the counted measures (MinChange),
// from what settings that change nothing a transaction executes moved
// here (docs/counting-instructions.md, "Negligible is not a regression"):
// instructions at most 0.019 % (0.064 % with the cache simulation, whose
// postmaster runs instrumented), estimated cycles 0.088 %, system calls
// and clock reads whole calls (0.13 %), the simulated misses, which a
// different layout of shared memory moves more, 1.9 %.
const (
	minInstructions = 0.001
	minCycles       = 0.002
	minCalls        = 0.01
	minMisses       = 0.03
)

// simulated reads a measure from the cache and branch simulation
// (--count instructions,cache): the client backends' events per
// transaction, NaN without the simulation.
func simulated(read func(*result.CacheSim) uint64) func(*result.Step) float64 {
	return counted(func(i *result.Instructions) float64 {
		c := i.Simulated()
		if c == nil {
			return math.NaN()
		}
		return float64(read(c)) / float64(i.Transactions)
	})
}

// counted reads a measure from the instructions counted under Valgrind
// (--count instructions): the client backends' per transaction, NaN
// without them.
func counted(read func(*result.Instructions) float64) func(*result.Step) float64 {
	return func(s *result.Step) float64 {
		if s.Probes == nil || s.Probes.Instructions() == nil || s.Probes.Instructions().Transactions <= 0 {
			return math.NaN()
		}
		if v := read(s.Probes.Instructions()); v > 0 {
			return v
		}
		return math.NaN()
	}
}

// StepLabel names the step of a sweep with n clients as bounds write it:
// "c=16".
func StepLabel(clients int) string { return "c=" + strconv.Itoa(clients) }
