package probe_test

import (
	"slices"
	"testing"

	"github.com/pgscale/pgscale/internal/probe"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/report/html"
	"github.com/pgscale/pgscale/internal/result"
)

// TestEveryProbeIsRendered: every registered probe has its evidence in
// result.Probes under its name, a text writer (internal/report,
// evidence_NAME.go) and an HTML view (internal/report/html,
// evidence_NAME.go) registered by that name; and so has every kind of
// evidence registered in result.Probes, whichever probe writes it; and
// every layer holds them in the probes' order.
func TestEveryProbeIsRendered(t *testing.T) {
	evidence := result.EvidenceNames()
	text, page := report.EvidenceProbes(), html.EvidenceProbes()
	check := func(what, name string) {
		if !slices.Contains(text, name) {
			t.Errorf("%s %q: no text writer in internal/report (evidence_%s.go, registered in its init)", what, name, name)
		}
		if !slices.Contains(page, name) {
			t.Errorf("%s %q: no HTML view in internal/report/html (evidence_%s.go, registered in its init)", what, name, name)
		}
	}
	for _, name := range probe.Names() {
		if !slices.Contains(evidence, name) {
			t.Errorf("probe %q: no evidence of that name registered in result.Probes (internal/result/evidence_%s.go)", name, name)
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
	// Each layer registers under the probe's one ID (internal/probeid),
	// so they all hold the probes in the one order of its ranks.
	for _, l := range []struct {
		what  string
		names []string
	}{{"result.Probes", evidence}, {"the text writers", text}, {"the HTML views", page}} {
		if !slices.Equal(l.names, probe.Names()) {
			t.Errorf("%s hold the probes in the order %v, the probes run in %v: register each under its probeid.ID", l.what, l.names, probe.Names())
		}
	}
}
