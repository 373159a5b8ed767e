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
	h := &abHeader{Run: a.Run, Baseline: a.Baseline, Rounds: a.Rounds, RoundsDone: a.RoundsDone,
		SliceS: num(a.SliceS), Calibration: a.Calibration}
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
		h.Targets = append(h.Targets, abTarget{Name: t.Name, Spec: t.Spec, File: t.File})
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
	for _, s := range wl.Scripts {
		h.Scripts = append(h.Scripts, script{Name: s.Name, Weight: s.Weight, Source: s.Source})
	}
	h.Defines = sortedKV(wl.Defines)
	t := f.Target
	h.Target = target{Kind: t.Kind, Name: t.Name, Description: t.Description, ServerVersion: t.ServerVersion,
		BinDir: t.BinDir, Settings: sortedKV(t.Settings), Preloaded: t.Preloaded, Tmpfs: t.Tmpfs}
	if pl := t.Pooler; pl != nil {
		h.Target.Pooler = &pooler{Program: pl.Program, Version: pl.Version, Server: pl.Server, Of: pl.Of,
			Settings: sortedKV(pl.Settings), Command: pl.Command, Files: sortedKV(pl.Files)}
	}
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
