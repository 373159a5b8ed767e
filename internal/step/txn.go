package step

import (
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/script"
)

// txnHook passes the engine's transactions on to sink.
func txnHook(sink observe.TxnSink) func(engine.Txn) {
	return func(t engine.Txn) {
		o := observe.Txn{Client: t.Client, Number: t.Number, Script: t.Script, End: t.End,
			LatencyUS: t.Latency.Microseconds(), LagUS: t.Lag.Microseconds(), Tries: t.Tries, Skipped: t.Skipped, Failed: t.Failed}
		if t.Failed {
			o.Kind = t.Kind.String()
		}
		sink.Txn(o)
	}
}

// txnStep tells a transaction sink how the step's clients are dealt to
// pgbench's threads, and gives it each thread's sampling sequence.
func txnStep(prog *script.Program, clients int, start time.Time) observe.TxnStep {
	st := observe.TxnStep{Clients: clients, Threads: prog.Threads(), Thread: prog.Thread, Start: start}
	for t := 0; t < st.Threads; t++ {
		st.Sample = append(st.Sample, prog.SampleRand(t))
	}
	return st
}
