package result

// Pgbench is how pgscale pgbench was asked to report: pgbench's own report
// shows some lines only under some options, so rendering it again from the
// file needs them.
type Pgbench struct {
	// ProgressS is -P: with it pgbench reports the measured latency
	// average and standard deviation instead of one computed from the
	// run's duration.
	ProgressS int `json:"progress_s,omitempty"`
	// ReportPerCommand is -r.
	ReportPerCommand bool `json:"report_per_command,omitempty"`
	// FailuresDetailed is --failures-detailed.
	FailuresDetailed bool `json:"failures_detailed,omitempty"`
	// VerboseErrors is --verbose-errors; ExitOnAbort --exit-on-abort.
	VerboseErrors bool `json:"verbose_errors,omitempty"`
	ExitOnAbort   bool `json:"exit_on_abort,omitempty"`
	// Log is the per-transaction log (-l), when one was written.
	Log *PgbenchLog `json:"log,omitempty"`
}

// PgbenchLog is pgbench's -l transaction log as written.
type PgbenchLog struct {
	// Files are the log files, one per thread, in thread order.
	Files []string `json:"files"`
	// SamplingRate is --sampling-rate (0: every transaction).
	SamplingRate float64 `json:"sampling_rate,omitempty"`
	// AggregateIntervalS is --aggregate-interval (0: a line per transaction).
	AggregateIntervalS int `json:"aggregate_interval_s,omitempty"`
}
