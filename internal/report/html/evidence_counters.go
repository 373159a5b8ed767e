package html

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerView(probeid.Counters, countersView) }

// countersView draws the hardware counters over the machine, or why there
// are none.
var countersView = evidenceView{data: countersData, tmpl: viewTemplate("counters",
	`{{with .Data}}<p>Hardware counters: {{.}}</p>{{end}}`)}

// countersData is the counters in a sentence.
func countersData(s result.Step, _ diagnose.Figures) any {
	c := s.Probes.Counters()
	if c == nil {
		return nil
	}
	if !c.Supported {
		if strings.HasPrefix(c.Reason, "not supported") {
			return c.Reason
		}
		return "not supported: " + c.Reason
	}
	line := fmt.Sprintf("%d cycles, %d instructions over the machine", c.Cycles, c.Instructions)
	if c.Cycles > 0 {
		line += fmt.Sprintf(" (%.2f instructions per cycle)", float64(c.Instructions)/float64(c.Cycles))
	}
	if c.Scaled {
		line += ", estimated (multiplexed)"
	}
	return line
}
