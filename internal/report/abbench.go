package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode"
)

// WriteBenchfmt writes every complete step of the inputs in Go's benchmark
// format, one result line per target, round and client count, with
// "target:" and "round:" configuration lines before each target's round:
//
//	BenchmarkSelectOnly/clients=16  81234  8123.4 txn/s  52000 p50-ns/txn  ...
//
// benchstat compares the targets with `benchstat -col target -ignore round
// FILE` (without -ignore round it makes one table per round). It compares
// rounds as independent values; pgscale's own verdict pairs them.
func WriteBenchfmt(w io.Writer, inputs []Input) error {
	var b strings.Builder
	b.WriteString("# pgscale A/B results; compare the targets with: benchstat -col target -ignore round FILE\n")
	if len(inputs) > 0 {
		f := inputs[0].File
		osArch := strings.SplitN(f.Environment.OS, "/", 2)
		if len(osArch) == 2 {
			fmt.Fprintf(&b, "goos: %s\ngoarch: %s\n", osArch[0], osArch[1])
		}
		if f.Environment.CPUModel != "" {
			fmt.Fprintf(&b, "cpu: %s\n", f.Environment.CPUModel)
		}
		fmt.Fprintf(&b, "pkg: pgscale\nworkload: %s\nprotocol: %s\nscale: %d\n", configValue(f.Workload.Name), f.Workload.Protocol, f.Workload.Scale)
	}
	for _, in := range inputs {
		name := "Benchmark" + benchName(in.File.Workload.Name)
		round := -1
		fmt.Fprintf(&b, "target: %s\n", in.Name)
		for _, s := range in.File.Steps {
			if !s.Complete || s.Summary.Transactions <= 0 {
				continue
			}
			if s.Round != round {
				round = s.Round
				fmt.Fprintf(&b, "round: %d\n", round)
			}
			fmt.Fprintf(&b, "%s/clients=%d\t%d\t%.2f txn/s\t%.0f p50-ns/txn\t%.0f p99-ns/txn", name, s.Clients,
				s.Summary.Transactions, s.Summary.TPS, s.Summary.Latency.P50Ms*1e6, s.Summary.Latency.P99Ms*1e6)
			if cpu := s.Summary.ClientCPU.PerTxnUS; cpu > 0 {
				fmt.Fprintf(&b, "\t%.0f client-cpu-ns/txn", cpu*1e3)
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// benchName turns a workload name into a benchmark name: "select-only" →
// "SelectOnly", "tpcb-like+my.sql" → "TpcbLike+My.sql". It never holds a
// space or a slash, which would end the name or start a sub-benchmark.
func benchName(workload string) string {
	var b strings.Builder
	up := true
	for _, r := range workload {
		switch {
		case r == '-' || r == '_' || unicode.IsSpace(r):
			up = true
		case r == '/':
			b.WriteRune(':')
			up = true
		default:
			if up {
				r = unicode.ToUpper(r)
			}
			b.WriteRune(r)
			up = r == '+'
		}
	}
	if b.Len() == 0 {
		return "Workload"
	}
	return b.String()
}

// configValue keeps a benchfmt configuration value on one line.
func configValue(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// BMF is Bencher Metric Format: benchmark name → measure slug → metric.
type BMF map[string]map[string]BMFMetric

// BMFMetric is one value with optional lower and upper bounds.
type BMFMetric struct {
	Value float64  `json:"value"`
	Lower *float64 `json:"lower_value,omitempty"`
	Upper *float64 `json:"upper_value,omitempty"`
}

// bmfMeasures maps pgscale's measures to Bencher measure slugs and the
// factor from pgscale's unit to Bencher's: throughput in operations per
// second and latencies in nanoseconds, as Bencher's built-in measures.
func bmfMeasures() map[string]struct {
	slug   string
	factor float64
} {
	return map[string]struct {
		slug   string
		factor float64
	}{
		"tps":            {"throughput", 1},
		"p50":            {"latency-p50", 1e6},
		"p99":            {"latency-p99", 1e6},
		"client-cpu/txn": {"client-cpu-per-txn", 1e3},
	}
}

// NewBMF returns the comparison's figures in Bencher Metric Format: one
// benchmark per target and step, named "TARGET/WORKLOAD/clients=N", each
// measure's value the median over the rounds and its bounds the
// distribution-free confidence interval of that median when there are
// enough rounds for one.
func NewBMF(r *ABReport) BMF {
	out := BMF{}
	ms := bmfMeasures()
	add := func(target string, row Row, sum summaryLike) {
		m, ok := ms[row.Measure.Name]
		if !ok || math.IsNaN(sum.median) {
			return
		}
		name := fmt.Sprintf("%s/%s/clients=%s", target, r.Workload, strings.TrimPrefix(row.Measure.Step, "c="))
		if out[name] == nil {
			out[name] = map[string]BMFMetric{}
		}
		met := BMFMetric{Value: round3(sum.median * m.factor)}
		if lo, hi := round3(sum.lo*m.factor), round3(sum.hi*m.factor); !math.IsInf(lo, 0) && !math.IsInf(hi, 0) && !math.IsNaN(lo) && !math.IsNaN(hi) {
			met.Lower, met.Upper = &lo, &hi
		}
		out[name][m.slug] = met
	}
	for _, row := range r.Rows {
		add(r.Baseline, row, summaryLike{row.Base.Median, row.Base.Lo, row.Base.Hi})
		for ci, c := range row.Cells {
			add(r.Candidates[ci], row, summaryLike{c.Cand.Median, c.Cand.Lo, c.Cand.Hi})
		}
	}
	return out
}

// round3 rounds to three decimals, dropping float noise such as
// 37500.00000000001 from unit conversions.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

type summaryLike struct{ median, lo, hi float64 }

// WriteBMF writes the comparison's figures as Bencher Metric Format JSON
// (encoding/json sorts the benchmark names).
func WriteBMF(w io.Writer, r *ABReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(NewBMF(r))
}
