package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode"

	"golang.org/x/perf/benchfmt"

	"github.com/pgscale/pgscale/internal/compare"
)

// benchfmtHeader opens the format's output: how to compare it, and which
// central value each tool reports (a comment line benchstat skips).
const benchfmtHeader = "# pgscale results, one line per step and round; compare the targets with: benchstat -col target -ignore round FILE" +
	" (benchstat's centre: the median of the rounds, compared unpaired; pgscale's verdict: each side's geometric mean of its rounds, paired by round)\n"

// writeBenchfmt writes every complete step of the document's files in Go's
// benchmark format (golang.org/x/perf/benchfmt), one result per file,
// round and client count, with the file's target and the step's round as
// configuration:
//
//	target: patch
//	round: 3
//	BenchmarkSelectOnly/clients=16 81234 8123.4 txn/s 52000 p50-ns/txn ...
//
// benchstat compares the targets with `benchstat -col target -ignore round
// FILE` (without -ignore round it makes one table per round). It compares
// rounds as independent values; pgscale's own verdict pairs them.
func writeBenchfmt(w io.Writer, d *Doc) error {
	if !d.Kind().analysis() {
		return notShown("benchfmt", d)
	}
	d = d.analyzed()
	if _, err := io.WriteString(w, benchfmtHeader); err != nil {
		return err
	}
	bw := benchfmt.NewWriter(w)
	units := exportUnits()
	for _, in := range d.Files {
		f := in.File
		base := []benchfmt.Config{}
		add := func(key, value string) {
			if value != "" {
				base = append(base, benchfmt.Config{Key: key, Value: []byte(configValue(value)), File: true})
			}
		}
		if goos, goarch, ok := strings.Cut(f.Environment.OS, "/"); ok {
			add("goos", goos)
			add("goarch", goarch)
		}
		add("cpu", f.Environment.CPUModel)
		add("pkg", "pgscale")
		add("workload", f.Workload.Name)
		add("protocol", f.Workload.Protocol)
		add("scale", fmt.Sprint(f.Workload.Scale))
		add("target", in.Name)
		for _, p := range in.Cell {
			add(p.Name, p.Value) // a suite cell's parameters: benchstat -col partitions ...
		}
		name := benchName(f.Workload.Name)
		for si, s := range f.Steps {
			if !s.Complete || s.Summary.Transactions <= 0 {
				continue
			}
			cfg := append([]benchfmt.Config(nil), base...)
			if s.Round > 0 {
				cfg = append(cfg, benchfmt.Config{Key: "round", Value: []byte(fmt.Sprint(s.Round)), File: true})
			}
			res := &benchfmt.Result{Config: cfg, Name: []byte(fmt.Sprintf("%s/clients=%d", name, s.Clients)), Iters: int(s.Summary.Transactions)}
			for _, md := range compare.Measures() {
				u, ok := units[md.Name]
				if v, has := in.Steps[si].Values[md.Name]; ok && has && (md.Name == "tps" || v > 0) {
					res.Values = append(res.Values, benchfmt.Value{Value: roundFor(v*u.factor, u.factor), Unit: u.bench})
				}
			}
			if err := bw.Write(res); err != nil {
				return err
			}
		}
	}
	// The decision rules' outcomes, as comment lines benchstat skips.
	for _, r := range docRules(d) {
		if _, err := io.WriteString(w, "# rule: "+r.text+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// docRule is one decision rule's outcome as a format states it.
type docRule struct {
	text  string
	spec  string // the rule as written, with its target and cell
	holds bool
}

// docRules are the decision rules' outcomes a document states: a suite's,
// else those its files record (run --expect), each named by its file when
// there are several.
func docRules(d *Doc) []docRule {
	var out []docRule
	if d.Kind() == KindSuite {
		for _, o := range d.Suite.Outcomes {
			out = append(out, docRule{text: o.String(), spec: strings.Trim(o.Target+" "+o.Spec+" "+o.Cell, " "), holds: !o.Failed()})
		}
		return out
	}
	for _, in := range d.Files {
		for _, r := range in.Rules {
			if r.Outcome == nil {
				continue
			}
			o := *r.Outcome
			text, spec := o.String(), o.Spec
			if len(d.Files) > 1 {
				text, spec = in.Name+": "+text, in.Name+" "+spec
			}
			out = append(out, docRule{text: text, spec: spec, holds: !o.Failed()})
		}
	}
	return out
}

// roundFor rounds a value for the format: whole units after a conversion
// to nanoseconds, two decimals otherwise (throughput).
func roundFor(v, factor float64) float64 {
	if factor > 1 {
		return math.Round(v)
	}
	return math.Round(v*100) / 100
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
