package html

import "github.com/pgscale/pgscale/internal/probeid"

func init() { registerView(probeid.Process, processView) }

// processView draws, under a step with a pooler, where the machine's CPU
// went; without one the CPU bars say it (the step's figures, cpuShares).
var processView = evidenceView{tmpl: viewTemplate("process",
	`{{with .Step.CPU}}{{if .Pooler}}<p>Machine CPU: {{with .Server}}server {{pct (deref .)}}, {{end}}load generator {{pct .Generator}}{{with .Pooler}}, pooler {{pct (deref .)}}{{end}}, probes {{pct .Probes}}, other processes {{pct .Other}}, idle {{pct .Idle}}; {{fmtnum .RunQueue}} runnable tasks waiting per core.</p>{{end}}{{end}}`)}
