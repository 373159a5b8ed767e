package probe_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/report/html"
	"github.com/pgscale/pgscale/internal/result"
)

// TestEveryProbeIsRendered: every registered probe has its evidence in
// result.Probes under its name, a text writer (internal/report,
// evidence_NAME.go) and an HTML view (internal/report/html,
// evidence_NAME.go) registered by that name; and so has every evidence
// field of result.Probes, whichever probe writes it.
func TestEveryProbeIsRendered(t *testing.T) {
	var evidence []string
	ty := reflect.TypeOf(result.Probes{})
	for i := range ty.NumField() {
		if f := ty.Field(i); f.Type.Kind() == reflect.Pointer {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			evidence = append(evidence, name)
		}
	}
	text, page := report.EvidenceProbes(), html.EvidenceProbes()
	check := func(what, name string) {
		if !slices.Contains(text, name) {
			t.Errorf("%s %q: no text writer in internal/report (evidence_%s.go and a line in evidenceWriters)", what, name, name)
		}
		if !slices.Contains(page, name) {
			t.Errorf("%s %q: no HTML view in internal/report/html (evidence_%s.go and a line in evidenceViews)", what, name, name)
		}
	}
	for _, name := range probe.Names() {
		if !slices.Contains(evidence, name) {
			t.Errorf("probe %q: no evidence field of that name in result.Probes (internal/result/evidence_%s.go)", name, name)
		}
		check("probe", name)
	}
	for _, name := range evidence {
		if !slices.Contains(probe.Names(), name) {
			check("evidence", name)
		}
	}
	for _, name := range append(text, page...) {
		if !slices.Contains(evidence, name) {
			t.Errorf("a renderer is registered for %q, which is no evidence in result.Probes", name)
		}
	}
}
