package html

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/prose"
)

// diagnosisHead is a sweep file's diagnosis as a page of sweeps opens on
// it: each step's verdict with its marks, the paragraph, what cut the
// run short, and where its evidence is. It is the text format's
// diagnosis, laid out; the data block does not repeat it (the evidence
// holds the paragraph).
type diagnosisHead struct {
	Label, File string
	EvidenceID  string
	Steps       []diagnosisStep
	Paragraph   string
	Incomplete  string
	// Split is each step's CPU split in a line, where the steps have one
	// (diagnose.CPUSplit): who ran the work, per transaction.
	Split []string
}

type diagnosisStep struct {
	Clients         int
	Verdict, Detail string
	Marks           string
}

// pageDiagnosis is the diagnosis of a sweep file fi, nil when it has none.
func pageDiagnosis(fi int, label, name string, fa compare.FileAnalysis) *diagnosisHead {
	d := fa.Diagnosis
	if d == nil {
		return nil
	}
	h := &diagnosisHead{Label: label, File: name, EvidenceID: fmt.Sprintf("evidence-%d", fi), Paragraph: d.Paragraph}
	for i, v := range d.Steps {
		var marks []string
		if i < len(fa.Steps) {
			marks = fa.Steps[i].Marks()
		}
		detail := v.Detail
		if v.CPUShift != "" {
			detail += "; " + v.CPUShift
		}
		h.Steps = append(h.Steps, diagnosisStep{Clients: v.Clients, Verdict: v.Verdict, Detail: detail, Marks: strings.Join(marks, ", ")})
	}
	for i, sa := range fa.Steps {
		sp := sa.Figures.Split
		if sp == nil || i >= len(fa.Rescaled.Steps) {
			continue
		}
		var parts []string
		for _, g := range sp.Groups {
			parts = append(parts, fmt.Sprintf("%s %s", g.Name, pct(num(g.Share))))
		}
		var top string
		if len(sp.Functions) > 0 {
			f := sp.Functions[0]
			top = fmt.Sprintf("; most of its own: %s (%s) %s", f.Name, f.Object, pct(num(f.Share)))
		}
		unit := "µs of server CPU"
		if sp.Counted {
			unit = "instructions"
		}
		h.Split = append(h.Split, fmt.Sprintf("%d client%s: %s %s per transaction, %s%s", fa.Rescaled.Steps[i].Clients, prose.Plural(fa.Rescaled.Steps[i].Clients),
			fmtNum(num(sp.PerTxn)), unit, strings.Join(parts, ", "), top))
	}
	if f := fa.Rescaled; !f.Complete {
		h.Incomplete = f.Reason
	}
	return h
}
