package report

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerWriter("profile", 70, writeProfile) }

// writeProfile writes the profile's file and the functions with the
// most samples of their own (the flame graph is the HTML format's).
func writeProfile(pg page, s result.Step, _ diagnose.Figures) {
	pr := s.Probes.Profile()
	if pr == nil {
		return
	}
	var top []string
	for i, fn := range pr.Top {
		if i == 5 {
			break
		}
		top = append(top, fmt.Sprintf("%s %s", fn.Function, prose.Share(float64(fn.Self)/float64(max(pr.Samples, 1)))))
	}
	unit := "samples"
	if pr.Unit != "" {
		unit = pr.Unit
	}
	pg.item("profile", fmt.Sprintf("%s, %d %s; self: %s", pr.File, pr.Samples, unit, strings.Join(top, ", ")))
}
