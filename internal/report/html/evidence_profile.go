package html

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerView(probeid.Profile, profileView) }

// profileView draws under each step the server's cost per transaction
// split by who did the work (diagnose.CPUSplit), from the step's profile;
// the Profiles section draws each profile as a flame graph (flame.go).
var profileView = evidenceView{data: profileData, tmpl: viewTemplate("profile",
	`{{with .Data}}<div class="split"><p><b>Who ran the server's work</b>: {{.Whole}} per transaction ({{.How}}).</p>
{{if .Groups}}<div class="scroll"><table class="split"><tr><th>part</th><th class="n">per transaction</th>{{if not .Counted}}<th class="n">±</th>{{end}}<th class="n">share</th></tr>
{{- range .Groups}}<tr><td>{{.Name}}{{with .Objects}} <span class="muted">({{.}})</span>{{end}}</td><td class="n">{{fmtnum .PerTxn}}</td>{{if not $.Data.Counted}}<td class="n">{{with .Margin}}{{fmtnum .}}{{end}}</td>{{end}}<td class="n">{{pct .Share}}</td></tr>{{end}}</table></div>{{end}}
{{- with .Functions}}<div class="scroll"><table class="split-functions"><tr><th>function (its own {{if $.Data.Counted}}instructions{{else}}time{{end}})</th><th>object</th><th class="n">per transaction</th>{{if not $.Data.Counted}}<th class="n">±</th>{{end}}<th class="n">share</th><th class="n">with callees</th></tr>
{{- range .}}<tr><td><code>{{.Name}}</code></td><td>{{.Objects}}</td><td class="n">{{fmtnum .PerTxn}}</td>{{if not $.Data.Counted}}<td class="n">{{with .Margin}}{{fmtnum .}}{{end}}</td>{{end}}<td class="n">{{pct .Share}}</td><td class="n">{{with .Total}}{{fmtnum .}}{{end}}</td></tr>{{end}}</table></div>{{end}}
{{- with .NotNamed}}<p class="muted">{{.}}</p>{{end}}
{{- with .Caution}}<p class="warn">{{.}}</p>{{end}}</div>{{end}}`)}

// cpuSplit is a step's CPUSplit as the page lays it out.
type cpuSplit struct {
	Whole     string     `json:"whole"`
	How       string     `json:"how"`
	Counted   bool       `json:"counted,omitempty"`
	Groups    []splitRow `json:"groups"`
	Functions []splitRow `json:"functions,omitempty"`
	NotNamed  string     `json:"not_named,omitempty"`
	Caution   string     `json:"caution,omitempty"`
}

// splitRow is one part: a kind with its objects, or a function with its
// object.
type splitRow struct {
	Name    string `json:"name"`
	Objects string `json:"objects,omitempty"`
	PerTxn  num    `json:"per_txn"`
	Margin  *num   `json:"margin,omitempty"`
	Share   num    `json:"share"`
	Total   *num   `json:"total,omitempty"`
}

// profileData is the step's split, nil without one.
func profileData(_ result.Step, fg diagnose.Figures) any {
	sp := fg.Split
	if sp == nil {
		return nil
	}
	if len(sp.Groups) == 0 {
		// No sample: nothing to split, only why.
		return &cpuSplit{Whole: fmt.Sprintf("%s µs of server CPU", fmtNum(num(sp.PerTxn))), How: fmt.Sprintf("%d perf samples at %d Hz", sp.Samples, sp.Hz),
			Caution: sp.Caution}
	}
	out := &cpuSplit{Counted: sp.Counted,
		Whole: fmt.Sprintf("%s µs of server CPU", fmtNum(num(sp.PerTxn))),
		How:   fmt.Sprintf("%d perf samples at %d Hz; ± is a 95%% interval", sp.Samples, sp.Hz)}
	if sp.Counted {
		out.Whole = fmt.Sprintf("%s instructions in the client backends", fmtNum(num(sp.PerTxn)))
		out.How = "counted under Valgrind, exact"
	}
	row := func(p diagnose.SplitPart) splitRow {
		r := splitRow{Name: p.Name, PerTxn: num(p.PerTxn), Share: num(p.Share)}
		if !sp.Counted {
			r.Margin = numPtr(p.Margin)
		}
		return r
	}
	for _, g := range sp.Groups {
		r := row(g)
		var objs []string
		for _, o := range sp.Objects {
			if o.Kind == g.Kind {
				s := o.Name
				if len(g.Objects) > 1 {
					s += " " + fmtNum(num(o.PerTxn))
				}
				objs = append(objs, s)
			}
		}
		r.Objects = strings.Join(objs, ", ")
		out.Groups = append(out.Groups, r)
	}
	for _, fn := range sp.Functions {
		r := row(fn)
		r.Objects, r.Total = fn.Object, numPtr(fn.TotalPerTxn)
		out.Functions = append(out.Functions, r)
	}
	var un []string
	for _, u := range sp.Unnamed {
		un = append(un, fmt.Sprintf("%s in %s", pct(num(u.Share)), u.Object))
	}
	if len(un) > 0 {
		out.NotNamed = "Functions without a name: " + strings.Join(un, ", ") + " (why, and what would name them: under this file's steps)."
	}
	out.Caution = sp.Caution
	return out
}
