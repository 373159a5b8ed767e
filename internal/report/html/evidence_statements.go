package html

import (
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerView(probeid.Statements, statementsView) }

// statementsView draws the statements that took the most server time.
var statementsView = evidenceView{data: statementsData, tmpl: viewTemplate("statements",
	`{{with .Data}}<div class="scroll"><table class="statements"><tr><th>statement</th><th class="n">calls</th><th class="n">total ms</th><th class="n">share of server time</th></tr>{{range .}}<tr><td><code>{{.Query}}</code></td><td class="n">{{.Calls}}</td><td class="n">{{fmtnum .TotalMs}}</td><td class="n">{{pct .Share}}</td></tr>{{end}}</table></div>{{end}}`)}

type statement struct {
	Query   string `json:"query"`
	Calls   int64  `json:"calls"`
	TotalMs num    `json:"total_ms"`
	Share   num    `json:"share"`
}

// statementsData is the five statements with the most server time, when
// there are any.
func statementsData(s result.Step, _ diagnose.Figures) any {
	st := s.Probes.Statements()
	if st == nil || len(st.Top) == 0 {
		return nil
	}
	var out []statement
	for i, q := range st.Top {
		if i == 5 {
			break
		}
		sh := 0.0
		if st.ServerMs > 0 {
			sh = q.TotalMs / st.ServerMs
		}
		out = append(out, statement{Query: q.Query, Calls: q.Calls, TotalMs: num(q.TotalMs), Share: num(sh)})
	}
	return out
}
