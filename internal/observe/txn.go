package observe

import "time"

// Txn is one transaction as it ended: what pgbench -l logs.
type Txn struct {
	Client int
	// Number is the client's count of transactions so far, this one
	// included (skipped and failed ones count, as in pgbench).
	Number int
	Script int // index of the script in the workload
	End    time.Time
	// LatencyUS is from the scheduled start to the end, LagUS from the
	// scheduled to the actual start (-R), in microseconds; both 0 for a
	// skipped or failed transaction.
	LatencyUS, LagUS int64
	Tries            int // 0 when skipped
	Skipped, Failed  bool
	Kind             string // when Failed: serialization, deadlock, connection or other
}

// TxnStep tells a TxnSink about the step whose transactions follow.
type TxnStep struct {
	Clients int
	// Threads is how many threads pgbench would deal the clients to (-j),
	// Thread the thread of a client.
	Threads int
	Thread  func(client int) int
	// Sample is each thread's random sequence for --sampling-rate
	// (pgbench's per-thread ts_sample_rs), each used by one thread only.
	Sample []interface{ Float64() float64 }
	// Start is when the clients start.
	Start time.Time
}

// TxnSink receives every transaction of a run as it ends (pgbench -l).
// Txn is called from the clients' goroutines, concurrently; StartStep
// before each step's clients start.
type TxnSink interface {
	StartStep(TxnStep)
	Txn(Txn)
}
