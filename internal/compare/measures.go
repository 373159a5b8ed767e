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
}

// Measures returns the measures compared per step, in report order:
// throughput, median and 99th percentile latency, the load generator's CPU
// per transaction, and what each transaction cost the server — CPU (and
// its user and kernel parts), context switches, a pooler's CPU, hardware
// cycles and instructions, and with --count instructions the client
// backends' instructions and system calls counted under Valgrind. The server's costs come from the process probe
// with whole-step turns, and from the slice meter in slices
// (diagnose.Compute); a step without them lacks those measures.
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
			if s.Probes == nil || s.Probes.Counters == nil || !s.Probes.Counters.Supported {
				return math.NaN()
			}
			f := diagnose.Compute(*s)
			if tx := f.TPS * f.ElapsedS; tx > 0 {
				return float64(pick(s.Probes.Counters)) / tx
			}
			return math.NaN()
		}
	}
	noCounters := func(s *result.Step) string {
		if s.Probes != nil && s.Probes.Counters != nil && !s.Probes.Counters.Supported {
			return s.Probes.Counters.Reason
		}
		return ""
	}
	return []MeasureDef{
		{"tps", "txn/s", stats.HigherIsBetter, func(s *result.Step) float64 { return s.Summary.TPS }, nil},
		{"p50", "ms", stats.LowerIsBetter, func(s *result.Step) float64 { return s.Summary.Latency.P50Ms }, nil},
		{"p99", "ms", stats.LowerIsBetter, func(s *result.Step) float64 { return s.Summary.Latency.P99Ms }, nil},
		{"client-cpu/txn", "µs", stats.LowerIsBetter, func(s *result.Step) float64 {
			if s.Summary.ClientCPU.PerTxnUS <= 0 {
				return math.NaN()
			}
			return s.Summary.ClientCPU.PerTxnUS
		}, nil},
		{"server-cpu/txn", "µs", stats.LowerIsBetter, fig(func(f diagnose.Figures) (float64, bool) {
			return f.ServerCPUPerTxnUS, f.HasServer && f.ServerCPUPerTxnUS > 0
		}), nil},
		{"server-user/txn", "µs", stats.LowerIsBetter, fig(func(f diagnose.Figures) (float64, bool) {
			return f.ServerUserPerTxnUS, f.HasServerSplit && f.ServerUserPerTxnUS > 0
		}), nil},
		{"server-sys/txn", "µs", stats.LowerIsBetter, fig(func(f diagnose.Figures) (float64, bool) {
			return f.ServerSysPerTxnUS, f.HasServerSplit && f.ServerSysPerTxnUS > 0
		}), nil},
		{"server-ctx/txn", "switches", stats.LowerIsBetter, fig(func(f diagnose.Figures) (float64, bool) {
			return f.ServerCtxPerTxn, f.HasServer && f.ServerCtxPerTxn > 0
		}), nil},
		{"pooler-cpu/txn", "µs", stats.LowerIsBetter, fig(func(f diagnose.Figures) (float64, bool) {
			return f.PoolerCPUPerTxnUS, f.HasPooler && f.PoolerCPUPerTxnUS > 0
		}), nil},
		{"pooler-ctx/txn", "switches", stats.LowerIsBetter, fig(func(f diagnose.Figures) (float64, bool) {
			return f.PoolerCtxPerTxn, f.HasPooler && f.PoolerCtxPerTxn > 0
		}), nil},
		{"cycles/txn", "cycles", stats.LowerIsBetter, counter(func(c *result.Counters) uint64 { return c.Cycles }), noCounters},
		{"instructions/txn", "instructions", stats.LowerIsBetter, counter(func(c *result.Counters) uint64 { return c.Instructions }), noCounters},
		{"instr/txn", "instructions", stats.LowerIsBetter, counted(func(i *result.Instructions) float64 { return i.PerTxn }), nil},
		{"syscalls/txn", "calls", stats.LowerIsBetter, counted(func(i *result.Instructions) float64 {
			return float64(i.ClientSyscalls) / float64(i.Transactions)
		}), nil},
		{"pooler-instr/txn", "instructions", stats.LowerIsBetter, counted(func(i *result.Instructions) float64 { return i.PoolerPerTxn }), nil},
	}
}

// counted reads a measure from the instructions counted under Valgrind
// (--count instructions): the client backends' per transaction, NaN
// without them.
func counted(read func(*result.Instructions) float64) func(*result.Step) float64 {
	return func(s *result.Step) float64 {
		if s.Probes == nil || s.Probes.Instructions == nil || s.Probes.Instructions.Transactions <= 0 {
			return math.NaN()
		}
		if v := read(s.Probes.Instructions); v > 0 {
			return v
		}
		return math.NaN()
	}
}

// StepLabel names the step of a sweep with n clients as bounds write it:
// "c=16".
func StepLabel(clients int) string { return "c=" + strconv.Itoa(clients) }
