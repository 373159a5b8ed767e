package html

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerView(probeid.Pooler, poolerView) }

// poolerView draws what the pooler's admin console said: the waiting
// clients and server connections per sample beside the load's throughput
// per interval, on the step's clock (a chart charts.js draws: a pool that
// is the limit shows as clients waiting while throughput stays flat), and
// each pool's figures.
var poolerView = evidenceView{data: poolerData, tmpl: viewTemplate("pooler", `
{{- with .Data}}
<p>Pooler ({{.Program}}): {{.Commands}} read {{.Samples}} times over {{fmtnum .WindowS}} s{{if .Own}}, its own session left out{{end}}; the pooler counted {{.Transactions}} transactions, the load {{.LoadTransactions}}.</p>
{{- if .Series}}<figure class="chart">{{template "chart" (box "pooler" (printf "pooler-%s" $.Step.ID) $.Step.ID "" "Throughput and the pooler's queue")}}</figure>{{end}}
<div class="scroll"><table class="pooler"><tr><th>pool</th><th class="n">clients active</th><th class="n">clients waiting</th><th class="n">servers active</th><th class="n">servers idle</th><th class="n">servers used</th><th class="n">longest wait (ms)</th><th class="n">wait per txn (ms)</th><th class="n">transactions</th><th class="n">queries</th></tr>
{{- range .Pools}}<tr><td>{{.Pool}}</td><td class="n">{{.ClientsActive}}</td><td class="n">{{.ClientsWaiting}}</td><td class="n">{{.ServersActive}}</td><td class="n">{{.ServersIdle}}</td><td class="n">{{.ServersUsed}}</td><td class="n">{{.MaxWait}}</td><td class="n">{{.WaitPerTxn}}</td><td class="n">{{.Transactions}}</td><td class="n">{{.Queries}}</td></tr>{{end}}</table></div>
{{- end}}`)}

// poolerPools is the step's pooler evidence as the page shows it.
type poolerPools struct {
	Program          string      `json:"program"`
	Commands         string      `json:"commands"`
	Samples          int         `json:"samples"`
	WindowS          num         `json:"window_s"`
	Own              bool        `json:"own_connection,omitempty"`
	Transactions     string      `json:"transactions"`
	LoadTransactions int64       `json:"load_transactions"`
	Pools            []poolLine  `json:"pools"`
	Series           []poolPoint `json:"series"`
	// Load is the load's throughput per interval, at each interval's
	// middle on the step's clock: what the queue is drawn beside.
	Load []poolLoad `json:"load,omitempty"`
}

// poolLoad is the load's throughput in one interval.
type poolLoad struct {
	T   num `json:"t"`
	TPS num `json:"tps"`
}

// charted says the part draws its chart: the queue has samples.
func (p *poolerPools) charted() bool { return len(p.Series) > 0 }

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
	if len(out.Series) > 0 {
		for _, iv := range s.Intervals {
			out.Load = append(out.Load, poolLoad{T: num(iv.StartS + iv.LengthS/2), TPS: num(iv.TPS)})
		}
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
