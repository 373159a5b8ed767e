package report

// exportUnit says how one of compare's measures leaves pgscale: its
// Bencher measure slug, its Go benchmark format unit, and the factor from
// pgscale's unit to theirs (latencies and CPU times in nanoseconds, as
// both tools' own measures are).
type exportUnit struct {
	bmf, bench string
	factor     float64
}

// exportUnits maps each measure of compare.Measures to its export units.
func exportUnits() map[string]exportUnit {
	return map[string]exportUnit{
		"tps":              {"throughput", "txn/s", 1},
		"p50":              {"latency-p50", "p50-ns/txn", 1e6},
		"p99":              {"latency-p99", "p99-ns/txn", 1e6},
		"client-cpu/txn":   {"client-cpu-per-txn", "client-cpu-ns/txn", 1e3},
		"server-cpu/txn":   {"server-cpu-per-txn", "server-cpu-ns/txn", 1e3},
		"server-user/txn":  {"server-user-per-txn", "server-user-ns/txn", 1e3},
		"server-sys/txn":   {"server-sys-per-txn", "server-sys-ns/txn", 1e3},
		"server-ctx/txn":   {"server-ctx-per-txn", "server-ctx/txn", 1},
		"pooler-cpu/txn":   {"pooler-cpu-per-txn", "pooler-cpu-ns/txn", 1e3},
		"cycles/txn":       {"cycles-per-txn", "cycles/txn", 1},
		"instructions/txn": {"instructions-per-txn", "instructions/txn", 1},
	}
}
