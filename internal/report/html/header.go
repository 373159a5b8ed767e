package html

import (
	"fmt"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

func abHead(g group, files []compare.FileAnalysis) *abHeader {
	a := g.ab
	h := &abHeader{AB: a}
	have := map[string]bool{}
	names := map[string]bool{}
	for _, fi := range g.files {
		have[files[fi].File.Target.Name] = true
		for k := range files[fi].File.Target.Settings {
			names[k] = true
		}
	}
	// Settings that tell the targets apart; not those pgscale gives each
	// cluster of its own (port, socket directory), which differ on every
	// run.
	for _, k := range sortedKeys(names) {
		if result.ClusterOwn[k] {
			continue
		}
		var vals []keyVal
		same := true
		for i, fi := range g.files {
			f := files[fi].File
			v := f.Target.Settings[k]
			vals = append(vals, keyVal{f.Target.Name, v})
			same = same && (i == 0 || v == vals[0].Value)
		}
		if !same {
			h.Differ = append(h.Differ, settingDiff{Name: k, Values: vals})
		}
	}
	for _, t := range a.Targets {
		if !have[t.Name] {
			h.Missing = append(h.Missing, t.Name)
		}
	}
	return h
}

func header(fi int, nf compare.FileAnalysis, label string) fileHeader {
	f := nf.File
	h := fileHeader{ID: fmt.Sprintf("file-%d", fi), Name: nf.Location(), Label: label, Command: prose.Command(f.Command),
		Complete: f.Complete, Reason: f.Reason, Started: stamp(f.Started), Finished: stamp(f.Finished),
		Pgscale: f.Pgscale, Version: f.Version, Steps: len(f.Steps)}
	for _, s := range f.Steps {
		if s.Complete {
			h.StepsDone++
		}
	}
	wl := f.Workload
	parts := []string{wl.Name, "protocol " + wl.Protocol, fmt.Sprintf("scale %d", wl.Scale)}
	switch {
	case wl.DurationS > 0:
		parts = append(parts, fmt.Sprintf("%g s per step", wl.DurationS))
	case wl.Transactions > 0:
		parts = append(parts, fmt.Sprintf("%d transactions per client", wl.Transactions))
	}
	if wl.WarmupS > 0 {
		parts = append(parts, fmt.Sprintf("%g s warm-up", wl.WarmupS))
	}
	if wl.RateTPS > 0 {
		parts = append(parts, fmt.Sprintf("rate %g tps", wl.RateTPS))
	}
	if wl.Connect {
		parts = append(parts, "a connection per transaction")
	}
	parts = append(parts, fmt.Sprintf("max tries %d", wl.MaxTries), fmt.Sprintf("random seed %d", wl.RandomSeed))
	h.Workload = strings.Join(parts, ", ")
	h.Scripts, h.Defines, h.Target = wl.Scripts, wl.Defines, f.Target
	e := f.Environment
	h.Machine = fmt.Sprintf("%s: %d CPUs (%s), %d MiB, %s, kernel %s, %s, GOMAXPROCS %d",
		e.Hostname, e.CPUs, e.CPUModel, e.MemoryMB, e.OS, e.Kernel, e.GoVersion, e.GOMAXPROCS)
	if f.Diagnosis == nil && f.Version >= 2 && f.AB == nil {
		h.Warnings = append(h.Warnings, "the file holds no diagnosis of its own; the page diagnoses its steps again")
	}
	return h
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}
