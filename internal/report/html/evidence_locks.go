package html

import (
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerView(probeid.Locks, locksView) }

// locksView draws what the pg_locks snapshots saw.
var locksView = evidenceView{data: locksData, tmpl: viewTemplate("locks", `
{{- with .Data}}
{{- if and (not .Backends) (not .MaxSlowWeak) (not .Waiting) (not .Exhausted)}}
<p>Locks: no client backend held or waited for a lock in {{.Snapshots}} <code>pg_locks</code> snapshots.</p>
{{- else}}
<p>Locks, over {{.Snapshots}} <code>pg_locks</code> snapshots: up to {{.Backends}} backends holding locks; up to {{.MaxSlowWeak}} weak relation locks per backend outside the fast path (mean {{fmtnum .MeanSlowWeak}}); up to {{.MaxFastPath}} of {{.FastPathSlots}} fast-path slots{{with .SlotsFrom}} ({{.}}){{end}} used{{if .Exhausted}}; <span class="warn">fast-path slots exhausted in {{.Exhausted}} backend snapshots</span>{{end}}.</p>
{{- with .Waiting}}<div class="scroll"><table class="lock-waits"><tr><th>ungranted lock</th><th>mode</th><th class="n">seen</th></tr>{{range .}}<tr><td><code>{{.LockType}}</code></td><td><code>{{.Mode}}</code></td><td class="n">{{.Count}}</td></tr>{{end}}</table></div>{{end}}
{{- end}}
{{- end}}`)}

type locks struct {
	Snapshots     int    `json:"snapshots"`
	Backends      int    `json:"backends"`
	MaxSlowWeak   int    `json:"max_slow_weak"`
	MeanSlowWeak  num    `json:"mean_slow_weak"`
	MaxFastPath   int    `json:"max_fast_path"`
	FastPathSlots int    `json:"fast_path_slots"`
	SlotsFrom     string `json:"fast_path_slots_from,omitempty"`
	Exhausted     int    `json:"fast_path_exhausted"`
	Waiting       []wait `json:"waiting,omitempty"`
}

type wait struct {
	LockType string `json:"locktype"`
	Mode     string `json:"mode"`
	Count    int    `json:"count"`
}

// locksData is the step's lock snapshots, when it took any.
func locksData(s result.Step, _ diagnose.Figures) any {
	l := s.Probes.Locks()
	if l == nil || l.Snapshots == 0 {
		return nil
	}
	lk := &locks{Snapshots: l.Snapshots, Backends: l.Backends, MaxSlowWeak: l.MaxSlowWeak, MeanSlowWeak: num(l.MeanSlowWeak),
		MaxFastPath: l.MaxFastPath, FastPathSlots: l.FastPathSlots, Exhausted: l.Exhausted, SlotsFrom: slotsFrom[l.FastPathSlotsFrom]}
	for _, w := range l.Waiting {
		lk.Waiting = append(lk.Waiting, wait{LockType: w.LockType, Mode: w.Mode, Count: w.Count})
	}
	return lk
}

// slotsFrom says where a fast-path slot count came from.
var slotsFrom = map[string]string{"build": "the build's", "version": "the version's", "observed": "at least: observed, more than the version's"}
