package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

// evidenceWriter writes one probe's evidence under a step, in text and
// markdown; write writes nothing when the step holds none of it.
type evidenceWriter struct {
	// probe is the probe whose evidence it writes: its name and its
	// place among the others.
	probe probeid.ID
	write func(pg page, s result.Step, f diagnose.Figures)
}

// evidenceWriters is the registry of the probes' writers, by rank: each
// probe's file (evidence_NAME.go) registers its writer from an init
// function (registerWriter), so adding one changes no other file. It is
// filled when the program starts and only read after.
var evidenceWriters []evidenceWriter

// registerWriter adds the writer of the evidence of the probe id, at its
// place among the others (rising rank).
func registerWriter(id probeid.ID, write func(pg page, s result.Step, f diagnose.Figures)) {
	for _, w := range evidenceWriters {
		if w.probe.Name == id.Name {
			panic("report: a second writer for " + id.Name)
		}
	}
	evidenceWriters = append(evidenceWriters, evidenceWriter{probe: id, write: write})
	sort.SliceStable(evidenceWriters, func(i, j int) bool { return evidenceWriters[i].probe.Rank < evidenceWriters[j].probe.Rank })
}

// EvidenceProbes names the probes whose evidence the text and markdown
// formats write, in the order they write it.
func EvidenceProbes() []string {
	names := make([]string, len(evidenceWriters))
	for i, w := range evidenceWriters {
		names[i] = w.probe.Name
	}
	return names
}

// writeEvidence writes what a step's probes gathered, probe by probe: the
// evidence under its verdict, then what the probes cost and which could
// not run.
func writeEvidence(pg page, s result.Step, f diagnose.Figures) {
	p := s.Probes
	if p == nil {
		pg.item("probes", "none recorded")
		return
	}
	for _, w := range evidenceWriters {
		w.write(pg, s, f)
	}
	if len(p.Costs) > 0 && f.ElapsedS > 0 && f.CPUs > 0 {
		var cs []string
		for _, c := range p.Costs {
			x := fmt.Sprintf("%s %.1f ms", c.Probe, (c.LocalCPUS+c.ServerCPUS)*1000)
			if c.Queries > 0 {
				x += fmt.Sprintf(" (%d queries)", c.Queries)
			}
			cs = append(cs, x)
		}
		pg.item("probe cost", fmt.Sprintf("%s of the machine: %s", prose.Share(f.ProbeShare), strings.Join(cs, ", ")))
	}
	for _, u := range f.Unavailable {
		pg.item("unavailable", u.Probe+": "+u.Reason)
	}
}
