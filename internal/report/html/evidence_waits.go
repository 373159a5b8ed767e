package html

import "github.com/pgscale/pgscale/internal/probeid"

func init() { registerView(probeid.Waits, waitsView) }

// waitsView draws the client backends' top wait events (the step's
// figures; the wait-class bars draw the classes).
var waitsView = evidenceView{tmpl: viewTemplate("waits",
	`{{with .Step.TopEvents}}<div class="scroll"><table class="waits"><tr><th>wait event ({{$.Step.WaitSource}})</th><th class="n">share of samples</th></tr>{{range .}}<tr><td><code>{{.Name}}</code></td><td class="n">{{pct .Share}}</td></tr>{{end}}</table></div>{{end}}`)}
