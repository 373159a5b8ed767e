package html

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

// The checkpoints part marks a checkpoint begun during the step and
// shows a row per figure the server has, per transaction where it is
// counted so; a figure it lacks (the backends' writes from PostgreSQL 17)
// has no row.
func TestCheckpointsView(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	f := func(x float64) *float64 { return &x }
	p := &result.Probes{}
	p.SetCheckpoints(&result.Checkpoints{WindowS: 5, LoadTransactions: 100, Requested: i(1), Timed: i(0), WriteMs: f(12.5), SyncMs: f(1),
		InsertedBytes: i(41200), BytesPerTxn: f(412), WAL: &result.WALStats{Records: 300, FPI: 30, Bytes: 41000, FPIPerTxn: f(0.3)}})
	var out string
	for _, part := range evidenceParts(result.Step{Clients: 2, Probes: p}, diagnose.Figures{}) {
		if part.view.probe != probeid.Checkpoints {
			continue
		}
		h, err := part.HTML(stepEvidence{})
		if err != nil {
			t.Fatal(err)
		}
		out = string(h)
	}
	for _, want := range []string{"a checkpoint began during the step", "<td>checkpoints requested</td><td class=\"n\">1</td>",
		"<td>WAL inserted (bytes)</td><td class=\"n\">41200</td><td class=\"n\">412</td>", "<td>full-page images</td><td class=\"n\">30</td><td class=\"n\">0.300</td>"} {
		if !strings.Contains(out, want) {
			t.Errorf("the checkpoints part lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "by backends") {
		t.Errorf("a figure the evidence lacks has a row:\n%s", out)
	}
}
