package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
)

// BMF is Bencher Metric Format: benchmark name → measure slug → metric.
type BMF map[string]map[string]BMFMetric

// BMFMetric is one value with optional lower and upper bounds.
type BMFMetric struct {
	Value float64  `json:"value"`
	Lower *float64 `json:"lower_value,omitempty"`
	Upper *float64 `json:"upper_value,omitempty"`
}

// NewBMF returns a comparison's figures in Bencher Metric Format: one
// benchmark per target and step, named "TARGET/WORKLOAD/clients=N", each
// measure's value its geometric mean over the rounds (the centre the
// comparison's change is of) and its bounds the t interval of that mean
// when there are enough rounds for one.
func NewBMF(r *compare.Comparison) BMF {
	out := BMF{}
	bmfInto(out, r, r.Workload)
	return out
}

// SuiteBMF returns a suite's figures in Bencher Metric Format: as NewBMF
// for every compared cell, the cell named after the workload,
// "TARGET/WORKLOAD[partitions=32]/clients=N"; a single-target suite's
// files as FilesBMF.
func SuiteBMF(s *compare.Suite) BMF {
	out := BMF{}
	for _, c := range s.Cells {
		if c.Comparison != nil {
			bmfInto(out, c.Comparison, c.Comparison.Workload+"["+c.Key+"]")
			continue
		}
		for name, m := range FilesBMF(c.Files) {
			out[name] = m
		}
	}
	return out
}

// bmfInto adds a comparison's figures to out, naming the workload label.
func bmfInto(out BMF, r *compare.Comparison, label string) {
	ms := exportUnits()
	add := func(target string, row compare.Row, sum summaryLike) {
		m, ok := ms[row.Measure.Name]
		if !ok || math.IsNaN(sum.centre) {
			return
		}
		name := fmt.Sprintf("%s/%s/clients=%s", target, label, strings.TrimPrefix(row.Measure.Step, "c="))
		if out[name] == nil {
			out[name] = map[string]BMFMetric{}
		}
		met := BMFMetric{Value: round3(sum.centre * m.factor)}
		if lo, hi := round3(sum.lo*m.factor), round3(sum.hi*m.factor); !math.IsInf(lo, 0) && !math.IsInf(hi, 0) && !math.IsNaN(lo) && !math.IsNaN(hi) {
			met.Lower, met.Upper = &lo, &hi
		}
		out[name][m.bmf] = met
	}
	for _, row := range r.Rows {
		if len(row.Cells) == 0 {
			continue
		}
		add(r.Baseline, row, summaryLike{row.Cells[0].Assessment.Base, row.Base.GeoLo, row.Base.GeoHi})
		for ci, c := range row.Cells {
			add(r.Candidates[ci], row, summaryLike{c.Assessment.Cand, c.Cand.GeoLo, c.Cand.GeoHi})
		}
	}
}

// round3 rounds to three decimals, dropping float noise such as
// 37500.00000000001 from unit conversions.
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

type summaryLike struct{ centre, lo, hi float64 }

// FilesBMF is result files in Bencher Metric Format: every exported
// measure's central value per client count (the geometric mean of the
// file's steps with that count, FileAnalysis), without intervals.
func FilesBMF(files []compare.FileAnalysis) BMF {
	out := BMF{}
	ms := exportUnits()
	for _, fa := range files {
		for _, md := range compare.Measures() {
			m, ok := ms[md.Name]
			if !ok {
				continue
			}
			for _, p := range fa.Points {
				v := p.Centre(md.Name)
				if math.IsNaN(v) {
					continue
				}
				name := fmt.Sprintf("%s/%s/clients=%d", fa.Name, fa.File.Workload.Name+cellLabel(fa.Cell), p.Clients)
				if out[name] == nil {
					out[name] = map[string]BMFMetric{}
				}
				out[name][m.bmf] = BMFMetric{Value: round3(v * m.factor)}
			}
		}
	}
	return out
}

func writeBMF(w io.Writer, d *Doc) error {
	var out BMF
	switch k := d.Kind(); {
	case !k.analysis():
		return notShown("bmf", d)
	case k == KindSuite:
		out = SuiteBMF(d.Suite)
	case k == KindComparison:
		out = NewBMF(d.Comparison)
	default:
		d = d.analyzed()
		out = FilesBMF(d.Files)
	}
	// The decision rules' outcomes: a benchmark "rules", a measure per
	// rule (its spec, target and cell), 1 when it holds, 0 when it fails
	// or could not be checked.
	for _, r := range docRules(d) {
		if out["rules"] == nil {
			out["rules"] = map[string]BMFMetric{}
		}
		v := 0.0
		if r.holds {
			v = 1
		}
		out["rules"][r.spec] = BMFMetric{Value: v}
	}
	return writeJSON(w, out)
}

// cellLabel is "[partitions=32,rows=100]" for a suite cell's file, "" else.
func cellLabel(ps []compare.Param) string {
	if len(ps) == 0 {
		return ""
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Name + "=" + p.Value
	}
	return "[" + strings.Join(parts, ",") + "]"
}
