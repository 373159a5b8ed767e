package html

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerView(probeid.Checkpoints, checkpointsView) }

// checkpointsView draws what the checkpointer, the WAL and the backends
// did during the step: a checkpoint begun in it is marked, as it explains
// a dip in throughput; a figure the server does not have is left out.
var checkpointsView = evidenceView{data: checkpointsData, tmpl: viewTemplate("checkpoints", `
{{- with .Data}}
<p>Checkpoints and WAL over {{fmtnum .WindowS}} s{{if .Checkpoint}}: <span class="warn">a checkpoint began during the step</span>{{end}}.</p>
<div class="scroll"><table class="checkpoints"><tr><th>figure</th><th class="n">over the step</th><th class="n">per transaction</th></tr>
{{- range .Figures}}<tr><td>{{.Name}}</td><td class="n">{{.Value}}</td><td class="n">{{.PerTxn}}</td></tr>{{end}}</table></div>
{{- end}}`)}

// checkpoints is the step's checkpoints evidence as the page shows it.
type checkpoints struct {
	WindowS num `json:"window_s"`
	// Checkpoint says a checkpoint began during the step.
	Checkpoint bool         `json:"checkpoint"`
	Figures    []checkpoint `json:"figures"`
}

// checkpoint is one figure's row.
type checkpoint struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	PerTxn string `json:"per_txn,omitempty"`
}

func checkpointsData(s result.Step, _ diagnose.Figures) any {
	c := s.Probes.Checkpoints()
	if c == nil {
		return nil
	}
	out := &checkpoints{WindowS: num(c.WindowS)}
	out.Checkpoint = (c.Requested != nil && *c.Requested > 0) || (c.Timed != nil && *c.Timed > 0)
	count := func(name string, n *int64) {
		if n != nil {
			out.Figures = append(out.Figures, checkpoint{Name: name, Value: fmt.Sprint(*n)})
		}
	}
	ms := func(name string, x *float64) {
		if x != nil {
			out.Figures = append(out.Figures, checkpoint{Name: name, Value: fmtNum(*x)})
		}
	}
	perTxn := func(x *float64) string {
		if x == nil {
			return ""
		}
		return fmtNum(*x)
	}
	count("checkpoints requested", c.Requested)
	count("checkpoints timed", c.Timed)
	ms("checkpoint write (ms)", c.WriteMs)
	ms("checkpoint sync (ms)", c.SyncMs)
	count("buffers written by checkpoints", c.BuffersCheckpoint)
	count("buffers written by the background writer", c.BuffersClean)
	count("buffers written by backends", c.BuffersBackend)
	count("fsyncs done by backends", c.BuffersBackendFsync)
	count("buffers allocated", c.BuffersAlloc)
	if c.InsertedBytes != nil {
		out.Figures = append(out.Figures, checkpoint{Name: "WAL inserted (bytes)", Value: fmt.Sprint(*c.InsertedBytes), PerTxn: perTxn(c.BytesPerTxn)})
	}
	if w := c.WAL; w != nil {
		out.Figures = append(out.Figures, checkpoint{Name: "WAL records", Value: fmt.Sprint(w.Records)},
			checkpoint{Name: "full-page images", Value: fmt.Sprint(w.FPI), PerTxn: perTxn(w.FPIPerTxn)},
			checkpoint{Name: "WAL bytes reported (pg_stat_wal)", Value: fmt.Sprint(w.Bytes)},
			checkpoint{Name: "WAL buffers full", Value: fmt.Sprint(w.BuffersFull)})
		count("WAL writes", w.Writes)
		count("WAL syncs", w.Syncs)
	}
	return out
}
