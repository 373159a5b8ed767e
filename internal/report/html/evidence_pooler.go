package html

import (
	"fmt"
	"html/template"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerView(poolerView, 85) }

// poolerView draws what the pooler's admin console said: the waiting
// clients and server connections per sample beside the load's throughput
// per interval, on the step's clock, and each pool's figures.
var poolerView = evidenceView{probe: "pooler", data: poolerData, tmpl: viewTemplate("pooler", `
{{- with .Data}}
<p>Pooler ({{.Program}}): {{.Commands}} read {{.Samples}} times over {{fmtnum .WindowS}} s{{if .Own}}, its own session left out{{end}}; the pooler counted {{.Transactions}} transactions, the load {{.LoadTransactions}}.</p>
{{- with .Chart}}<figure class="chart">{{.}}</figure>{{end}}
<div class="scroll"><table class="pooler"><tr><th>pool</th><th class="n">clients active</th><th class="n">clients waiting</th><th class="n">servers active</th><th class="n">servers idle</th><th class="n">servers used</th><th class="n">longest wait (ms)</th><th class="n">wait per txn (ms)</th><th class="n">transactions</th><th class="n">queries</th></tr>
{{- range .Pools}}<tr><td>{{.Pool}}</td><td class="n">{{.ClientsActive}}</td><td class="n">{{.ClientsWaiting}}</td><td class="n">{{.ServersActive}}</td><td class="n">{{.ServersIdle}}</td><td class="n">{{.ServersUsed}}</td><td class="n">{{.MaxWait}}</td><td class="n">{{.WaitPerTxn}}</td><td class="n">{{.Transactions}}</td><td class="n">{{.Queries}}</td></tr>{{end}}</table></div>
{{- end}}`)}

// poolerPools is the step's pooler evidence as the page shows it.
type poolerPools struct {
	Program          string        `json:"program"`
	Commands         string        `json:"commands"`
	Samples          int           `json:"samples"`
	WindowS          num           `json:"window_s"`
	Own              bool          `json:"own_connection,omitempty"`
	Transactions     string        `json:"transactions"`
	LoadTransactions int64         `json:"load_transactions"`
	Pools            []poolLine    `json:"pools"`
	Series           []poolPoint   `json:"series"`
	Chart            template.HTML `json:"-"`
}

// poolLine is one pool's row (the whole pooler's first), each figure
// written or "–" where the mapping has none.
type poolLine struct {
	Pool           string `json:"pool"`
	ClientsActive  string `json:"clients_active"`
	ClientsWaiting string `json:"clients_waiting"`
	ServersActive  string `json:"servers_active"`
	ServersIdle    string `json:"servers_idle"`
	ServersUsed    string `json:"servers_used"`
	MaxWait        string `json:"maxwait_ms"`
	WaitPerTxn     string `json:"wait_per_txn_ms"`
	Transactions   string `json:"transactions"`
	Queries        string `json:"queries"`
}

// poolPoint is the whole pooler at one sample.
type poolPoint struct {
	T       num  `json:"t"`
	Waiting *num `json:"clients_waiting,omitempty"`
	Active  *num `json:"servers_active,omitempty"`
}

func poolerData(s result.Step, _ diagnose.Figures) any {
	p := s.Probes.Pooler()
	if p == nil {
		return nil
	}
	out := &poolerPools{Program: p.Program, Samples: p.Samples, WindowS: num(p.WindowS), Own: p.OwnConnection,
		Transactions: intText(p.Total.Transactions), LoadTransactions: p.LoadTransactions}
	for i, c := range p.Commands {
		if i > 0 {
			out.Commands += ", "
		}
		out.Commands += c
	}
	out.Pools = append(out.Pools, poolLineOf("all", p.Total))
	if len(p.Pools) > 1 {
		for _, pl := range p.Pools {
			out.Pools = append(out.Pools, poolLineOf(pl.Pool, pl))
		}
	}
	for _, x := range p.Series {
		pt := poolPoint{T: num(x.TS)}
		if x.ClientsWaiting != nil {
			pt.Waiting = numPtr(*x.ClientsWaiting)
		}
		if x.ServersActive != nil {
			pt.Active = numPtr(*x.ServersActive)
		}
		out.Series = append(out.Series, pt)
	}
	if svg, err := poolerChart(s, out.Series); err == nil {
		out.Chart = svg
	}
	return out
}

func poolLineOf(name string, f result.PoolFigures) poolLine {
	if name == "" {
		name = "(unnamed)"
	}
	g := func(x *result.Gauge) string {
		if x == nil {
			return "–"
		}
		return fmt.Sprintf("%s (max %s)", fmtNum(x.Mean), fmtNum(x.Max))
	}
	ms := func(x *float64, div float64) string {
		if x == nil {
			return "–"
		}
		return fmtNum(*x / div)
	}
	return poolLine{Pool: name, ClientsActive: g(f.ClientsActive), ClientsWaiting: g(f.ClientsWaiting), ServersActive: g(f.ServersActive),
		ServersIdle: g(f.ServersIdle), ServersUsed: g(f.ServersUsed), MaxWait: ms(f.MaxWaitMs, 1), WaitPerTxn: ms(f.WaitPerTxnUS, 1000),
		Transactions: intText(f.Transactions), Queries: intText(f.Queries)}
}

func intText(n *int64) string {
	if n == nil {
		return "–"
	}
	return fmt.Sprint(*n)
}

// poolerChart draws the load's throughput per interval above the waiting
// clients and active server connections per sample, on the step's clock:
// a pool that is the limit shows as clients waiting while throughput
// stays flat.
func poolerChart(s result.Step, series []poolPoint) (template.HTML, error) {
	tps := newPlot("throughput and the pooler's queue", "", "tps")
	queue := newPlot("", "seconds since the step's measured window began", "connections")
	var xt, xw, xa plotter.XYs
	xmax, ytps, yq := 0.0, 0.0, 0.0
	for _, iv := range s.Intervals {
		mid := iv.StartS + iv.LengthS/2
		xt = append(xt, plotter.XY{X: mid, Y: iv.TPS})
		xmax, ytps = math.Max(xmax, iv.StartS+iv.LengthS), math.Max(ytps, iv.TPS)
	}
	for _, p := range series {
		if p.Waiting != nil {
			xw = append(xw, plotter.XY{X: float64(p.T), Y: float64(*p.Waiting)})
			yq = math.Max(yq, float64(*p.Waiting))
		}
		if p.Active != nil {
			xa = append(xa, plotter.XY{X: float64(p.T), Y: float64(*p.Active)})
			yq = math.Max(yq, float64(*p.Active))
		}
		xmax = math.Max(xmax, float64(p.T))
	}
	if len(xw)+len(xa) == 0 {
		return "", fmt.Errorf("no queue figures")
	}
	dots := len(series) <= maxDots
	add := func(p *plot.Plot, xys plotter.XYs, i int, label string) error {
		if len(xys) == 0 {
			return nil
		}
		ls, err := linePoints(xys, seriesColor(i), 1.5, nil, dots)
		if err != nil {
			return err
		}
		p.Add(ls...)
		if label != "" {
			p.Legend.Add(label, ls[0].(plot.Thumbnailer))
		}
		return nil
	}
	if err := add(tps, xt, 0, ""); err != nil {
		return "", err
	}
	queue.Legend.Left = false
	if err := add(queue, xw, 1, "clients waiting"); err != nil {
		return "", err
	}
	if err := add(queue, xa, 2, "server connections active"); err != nil {
		return "", err
	}
	for _, p := range []*plot.Plot{tps, queue} {
		p.X.Min, p.X.Max = 0, math.Max(xmax, 1)
	}
	tps.X.Tick.Marker = blankTicks
	tps.Y.Min, tps.Y.Max = 0, math.Max(ytps*1.12, 1)
	queue.Y.Min, queue.Y.Max = 0, math.Max(yq*1.12, 1)
	return chartSVG(fmt.Sprintf("pooler-%s-%d", s.Started.Format("150405.000"), s.Clients), "throughput and the pooler's waiting clients per second",
		chartW, 2*panelH+vg.Points(30), tps, queue)
}
