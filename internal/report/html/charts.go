package html

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

// The charts are drawn in the browser: charts.js reads the page's data
// block and hands each chart to uPlot (uplot.go). The page holds, for
// every chart, an empty box saying what to draw from the data (chartBox);
// the tables beside the charts give every number without the script.

//go:embed charts.js
var chartsJS string

var chartsScript = newScript(compact(chartsJS))

// chartBox is one chart's place in the page: what charts.js draws there
// (Kind), from which part of the data block (Of: indexes or an id, Metric,
// Measures), titled and labelled as Go decides.
type chartBox struct {
	ID, Kind, Of, Metric, Measures string
	Title, YLabel                  string
}

// chartTemplate writes a chart's box, empty until charts.js draws in it;
// the page's template and the probes' views parse it.
const chartTemplate = `{{define "chart"}}<div class="uchart" id="{{.ID}}" data-chart="{{.Kind}}" data-of="{{.Of}}"
{{- with .Metric}} data-metric="{{.}}"{{end}}{{with .Measures}} data-measures="{{.}}"{{end}} data-title="{{.Title}}"
{{- with .YLabel}} data-ylabel="{{.}}"{{end}}></div>{{end}}`

// box is a chart's place, for the templates: kind, id, of, metric, title.
func box(kind, id, of, metric, title string) chartBox {
	return chartBox{ID: id, Kind: kind, Of: of, Metric: metric, Title: title}
}

// scalingPanel is a panel of the scaling charts: a name and its lines, as
// indexes into scaling.Series.
type scalingPanel struct {
	name   string
	series []int
}

// scalingPanels splits the scaling curves into panels, one per A/B run
// (Panel) when the page has several, each on axes of its own: a 700 tps
// cell is no flat line beside a 20 000 tps one. Sweeps share one panel,
// the lock study's view of several targets against clients.
func scalingPanels(sc *scaling) []scalingPanel {
	var out []scalingPanel
	at := map[string]int{}
	for i, s := range sc.Series {
		k, ok := at[s.Panel]
		if !ok {
			k = len(out)
			at[s.Panel] = k
			name := s.Panel
			if name == "" {
				name = "sweeps"
			}
			out = append(out, scalingPanel{name: name})
		}
		out[k].series = append(out[k].series, i)
	}
	return out
}

// scalingCharts are each panel's charts in order, each on its own axes
// against clients (small multiples, a row per panel): throughput, p99
// latency, the costs per transaction, the speedup of a sweep and, with
// two lines or more, each line's change against the panel's baseline; a
// chart with nothing to draw is left out.
func scalingCharts(sc *scaling) [][]chartBox {
	panels := scalingPanels(sc)
	out := make([][]chartBox, len(panels))
	for k, p := range panels {
		of := make([]string, len(p.series))
		has := map[string]bool{}
		counted := true // every line counted under Valgrind
		points := map[string]int{}
		var base string
		for i, si := range p.series {
			of[i] = strconv.Itoa(si)
			s := sc.Series[si]
			counted = counted && s.Counted
			if s.Baseline {
				// The target's name: the panel's title says the cell.
				base = s.Label
				if s.target != "" {
					base = s.target
				}
			}
			for _, pt := range s.Points {
				for _, c := range pt.Costs {
					has[c.Measure] = true
				}
				if pt.Speedup != nil {
					points[s.Label]++
				}
				has["vs"] = has["vs"] || pt.VsBase != nil
			}
			has["speedup"] = has["speedup"] || points[s.Label] > 1
		}
		add := func(metric, title, ylabel string, measures ...string) {
			id := "scaling-" + metric
			if len(panels) > 1 {
				id, title = fmt.Sprintf("%s-%d", id, k), title+": "+p.name
			}
			out[k] = append(out[k], chartBox{ID: id, Kind: "scaling", Of: strings.Join(of, " "), Metric: metric,
				Measures: strings.Join(measures, " "), Title: title, YLabel: ylabel})
		}
		// Under Valgrind the throughput, the latency, the speedup and
		// the change of throughput are Valgrind's, not the workload's:
		// a counted panel charts the instructions alone.
		if !counted {
			add("tps", "Throughput", "transactions per second")
			add("p99", "p99 latency", "ms")
		}
		if ms := present(has, "instr/txn", "pooler-instr/txn"); len(ms) > 0 {
			add("cost", "Instructions per transaction", "instructions, counted", ms...)
		} else if ms := present(has, "server-cpu/txn", "pooler-cpu/txn"); len(ms) > 0 {
			add("cost", "CPU per transaction", "µs", ms...)
		}
		if counted {
			continue
		}
		if has["speedup"] {
			title := "Speedup over the baseline step"
			if sc.PerCPU {
				title += ", per CPU-second the system had"
			}
			add("speedup", title, "× the baseline step")
		}
		if has["vs"] {
			add("change", "Throughput against "+base, "% change")
		}
	}
	return out
}

// present is those of names that has holds, in order.
func present(has map[string]bool, names ...string) []string {
	var out []string
	for _, n := range names {
		if has[n] {
			out = append(out, n)
		}
	}
	return out
}
