package html

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerView(probeid.Upstreams, upstreamsView) }

// upstreamsView draws how the work split between the servers behind the
// target (shards, a primary and its replicas) and the replicas' lag.
var upstreamsView = evidenceView{data: upstreamsData, tmpl: viewTemplate("upstreams",
	`{{with .Data}}<table><tr><th>server</th><th>role</th><th class="n">share</th><th class="n">transactions</th><th class="n">statements</th><th class="n">replica behind (bytes)</th><th class="n">replay lag (ms)</th></tr>{{range .}}<tr><td>{{.Name}}</td><td>{{.Role}}</td><td class="n">{{pct .Share}}</td><td class="n">{{.Transactions}}</td><td class="n">{{.Statements}}</td><td class="n">{{.Behind}}</td><td class="n">{{.ReplayLag}}</td></tr>{{end}}</table>{{end}}`)}

// upstream is one server behind the target over a step, as the page shows
// it.
type upstream struct {
	Name         string `json:"name"`
	Role         string `json:"role"`
	Share        num    `json:"share"`
	Transactions int64  `json:"transactions"`
	Statements   string `json:"statements"`
	Behind       string `json:"lag_bytes"`
	ReplayLag    string `json:"replay_lag_ms"`
}

func upstreamsData(s result.Step, _ diagnose.Figures) any {
	u := s.Probes.Upstreams()
	if u == nil || len(u.Servers) == 0 {
		return nil
	}
	var out []upstream
	for _, v := range u.Servers {
		row := upstream{Name: v.Name, Role: v.Role, Share: num(v.Share), Transactions: v.Transactions, Statements: "–", Behind: "–", ReplayLag: "–"}
		if v.Statements != nil {
			row.Statements = fmt.Sprint(*v.Statements)
		}
		if v.LagBytes != nil {
			row.Behind = fmt.Sprint(*v.LagBytes)
		}
		if v.ReplayLagMs != nil {
			row.ReplayLag = fmtNum(*v.ReplayLagMs)
		}
		out = append(out, row)
	}
	return out
}
