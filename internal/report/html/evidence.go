package html

import (
	"fmt"
	"html/template"
	"sort"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/report/remedy"
	"github.com/pgscale/pgscale/internal/result"
)

// fileEvidence is each step's verdict and evidence, as the file's analysis
// judged and figured them (each step against the first step of its round).
func fileEvidence(fi int, label, name string, fa compare.FileAnalysis) evidence {
	e := evidence{ID: fmt.Sprintf("evidence-%d", fi), Label: label, File: name}
	if d := fa.Diagnosis; d != nil {
		e.Paragraph = d.Paragraph
	}
	for _, u := range fa.Unnamed {
		e.Unnamed = append(e.Unnamed, fmt.Sprintf("%s (up to %s of a step's profile): %s.", u.Object, pct(num(u.Share)), remedy.Unnamed(u)))
	}
	f := fa.Rescaled
	figs := make([]diagnose.Figures, len(f.Steps))
	for i := range f.Steps {
		figs[i] = fa.Steps[i].Figures
	}
	for i, s := range f.Steps {
		v := fa.Steps[i].Verdict
		se := stepEvidence{stepFacts: stepFacts{ID: fmt.Sprintf("step-%d-%d", fi, i), Clients: s.Clients, Round: s.Round,
			Complete: s.Complete, Reason: s.Reason, Verdict: v.Verdict, Detail: v.Detail, Evidence: v.Evidence}}
		se.Knee, se.Peak = fa.Steps[i].Knee, fa.Steps[i].Peak
		sum := s.Summary
		se.Summary = stepSummary{Transactions: sum.Transactions, ElapsedS: num(s.ElapsedS), TPS: num(sum.TPS),
			MeanMs: num(sum.Latency.MeanMs), P50Ms: num(sum.Latency.P50Ms), P99Ms: num(sum.Latency.P99Ms),
			MaxMs: num(sum.Latency.MaxMs), Failed: sum.Failed, Retried: sum.Retried}
		stepFigures(&se, fa.Steps[i], s)
		se.Parts = evidenceParts(s, figs[i])
		if s.Probes != nil {
			e.HasProbes = true
		}
		if se.CPU != nil {
			e.HasCPU = true
		}
		if len(se.Waits) > 0 {
			e.HasWaits = true
		}
		e.Steps = append(e.Steps, se)
	}
	return e
}

// waitClasses are the wait-event classes in the order their bars stack:
// on CPU first, then the classes a bottleneck verdict names, then the rest.
var waitClasses = []string{"CPU", "LWLock", "Lock", "IO", "BufferPin", "IPC", "Extension", "Timeout", "Activity", "Client"}

// stepFigures sets what the page draws of a step from its analysis'
// figures (the CPU and wait-class bars, the top wait events, the costs
// per transaction) and the step's notes.
func stepFigures(se *stepEvidence, sa compare.StepAnalysis, s result.Step) {
	fg := sa.Figures
	if fg.HasHost {
		c := &cpuShares{Generator: num(fg.GeneratorShare), Probes: num(fg.ProbeShare),
			Idle: num(max(1-fg.MachineBusy, 0)), RunQueue: num(fg.RunQueuePerCore)}
		other := fg.OtherShare
		if fg.HasServer {
			c.Server = numPtr(fg.ServerShare)
		}
		if fg.HasPooler {
			// OtherShare counts the pooler; the bar shows it apart.
			c.Pooler = numPtr(fg.PoolerShare)
			other = max(other-fg.PoolerShare, 0)
		}
		c.Other = num(other)
		se.CPU = c
	}
	if fg.HasWaits {
		se.WaitSource = fg.WaitSource
		known := map[string]bool{}
		for _, cl := range waitClasses {
			known[cl] = true
			sh := fg.ClassShare[cl]
			if cl == "CPU" {
				sh = fg.CPUSample
			}
			if sh > 0 {
				se.Waits = append(se.Waits, share{Name: cl, Share: num(sh)})
			}
		}
		var rest []string
		for cl := range fg.ClassShare {
			if !known[cl] && fg.ClassShare[cl] > 0 {
				rest = append(rest, cl)
			}
		}
		sort.Strings(rest)
		for _, cl := range rest {
			se.Waits = append(se.Waits, share{Name: cl, Share: num(fg.ClassShare[cl])})
		}
		for i, ev := range fg.TopEvents {
			if i == 8 {
				break
			}
			se.TopEvents = append(se.TopEvents, share{Name: ev.Name, Share: num(ev.Share)})
		}
	}
	if fg.HasHost || fg.HasStatements {
		pt := &perTxn{LatencyMs: num(fg.LatencyMs)}
		if fg.HasServer && fg.Transactions > 0 {
			pt.ServerCPUUS = numPtr(fg.ServerCPUPerTxnUS)
			pt.CtxSwitches = numPtr(fg.CtxPerTxn)
		}
		if fg.HasHost && fg.Transactions > 0 {
			pt.GeneratorCPUUS = numPtr(fg.GeneratorCPUPerTxnUS)
		}
		if fg.HasPooler && fg.Transactions > 0 {
			pt.PoolerCPUUS = numPtr(fg.PoolerCPUPerTxnUS)
		}
		if fg.HasStatements {
			pt.ServerMs = numPtr(fg.ServerMsPerTxn)
			pt.NetworkMs = numPtr(fg.NetworkMs)
			if fg.HasPoolWait {
				pt.PoolWaitMs = numPtr(fg.PoolWaitMs)
			}
		}
		se.PerTxn = pt
	} else if s.Summary.ClientCPU.PerTxnUS > 0 {
		se.PerTxn = &perTxn{LatencyMs: num(fg.LatencyMs), GeneratorCPUUS: numPtr(s.Summary.ClientCPU.PerTxnUS)}
	}
	p := s.Probes
	if p != nil {
		for _, u := range fg.Unavailable {
			se.Unavailable = append(se.Unavailable, keyVal{u.Probe, u.Reason})
		}
		if p.Process() != nil {
			se.ServerNote = p.Process().ServerNote
		}
	}
	se.Errors = s.Errors
	se.Disturbances = s.Disturbances
	se.Outages = sa.Outages
}

// evidenceView is how the page shows one probe's evidence under each
// step: the probe's data, in the page's JSON under the probe's name, and
// the template that draws its part. A view with no template says where
// else the page shows the probe's evidence.
type evidenceView struct {
	// probe is the probe whose evidence it shows (registerView's): its
	// name and its place among the others.
	probe probeid.ID
	// data returns the probe's data of a step, nil when there is none;
	// nil when the part draws only from the step's figures.
	data func(s result.Step, fg diagnose.Figures) any
	// tmpl draws the part from a partData.
	tmpl *template.Template
	// elsewhere, for a view with no template, is where the page shows
	// the probe's evidence instead.
	elsewhere string
}

// evidenceViews is the registry of the probes' views, in the order their
// parts follow each other under a step (rising rank): each probe's file
// (evidence_NAME.go) registers its view from an init function
// (registerView), so adding one changes no other file. It is filled when
// the program starts and only read after.
var evidenceViews []evidenceView

// registerView adds the view of the probe id's evidence at the probe's
// place among the others.
func registerView(id probeid.ID, v evidenceView) {
	for _, o := range evidenceViews {
		if o.probe.Name == id.Name {
			panic("html: a second view for " + id.Name)
		}
	}
	v.probe = id
	evidenceViews = append(evidenceViews, v)
	sort.SliceStable(evidenceViews, func(i, j int) bool { return evidenceViews[i].probe.Rank < evidenceViews[j].probe.Rank })
}

// EvidenceProbes names the probes whose evidence the page shows, in the
// order of their parts under a step.
func EvidenceProbes() []string {
	names := make([]string, len(evidenceViews))
	for i, v := range evidenceViews {
		names[i] = v.probe.Name
	}
	return names
}

// evidencePart is one probe's part of a step.
type evidencePart struct {
	view *evidenceView
	data any
}

// partData is what a view's template draws from: the step, for its
// figures, and the probe's data.
type partData struct {
	Step stepEvidence
	Data any
}

// HTML draws the part under st.
func (p evidencePart) HTML(st stepEvidence) (template.HTML, error) {
	var b strings.Builder
	if err := p.view.tmpl.Execute(&b, partData{Step: st, Data: p.data}); err != nil {
		return "", fmt.Errorf("%s evidence: %w", p.view.probe.Name, err)
	}
	return template.HTML(b.String()), nil
}

// evidenceParts are the parts of a step that the probes' views draw.
func evidenceParts(s result.Step, fg diagnose.Figures) []evidencePart {
	if s.Probes == nil {
		return nil
	}
	var parts []evidencePart
	for i := range evidenceViews {
		v := &evidenceViews[i]
		if v.tmpl == nil {
			continue
		}
		part := evidencePart{view: v}
		if v.data != nil {
			part.data = v.data(s, fg)
		}
		parts = append(parts, part)
	}
	return parts
}

// viewTemplate parses a view's template, with the page's functions.
func viewTemplate(probe, text string) *template.Template {
	return template.Must(template.Must(template.New(probe).Funcs(templateFuncs).Parse(chartTemplate)).Parse(text))
}
