package compare_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/result"
)

// pooledCounts are a pooler's counts in front of a server: tx
// transactions at perTxn instructions each, plus rate instructions a
// second of the window's wall time secs, plus noise (how packets bunch).
func pooledCounts(tx int64, perTxn, rate, secs, noise float64) *result.Instructions {
	total := uint64(float64(tx)*perTxn + rate*secs + noise)
	return &result.Instructions{Tool: "callgrind", Transactions: tx, ClientBackends: uint64(tx) * 40000, PerTxn: 40000,
		Pooler: &result.InstructionGroup{Kind: "pooler", Processes: 1, Instructions: total}, PoolerPerTxn: float64(total) / float64(tx), PoolerWindowS: secs}
}

// A fit of the pooler's time-driven work that tells nothing (4 clients,
// 3 layouts: the windows' counts move with how packets bunch far more
// than with their lengths) is said in words, with no figure ("0 ± 53002
// instructions a second"), and nothing is taken off; a fit that shows a
// rate clearly is said with it.
func TestPoolerTimeNoteSaysAFitThatTellsNothing(t *testing.T) {
	secs := [2][]float64{{4.1, 5.6, 4.8}, {5.2, 4.4, 6.1}}
	bunching := [2][]float64{{40000, -35000, 52000}, {-48000, 30000, -20000}}
	inputs := comparetest.Files(t, fourClients(), []int{4}, 3)
	comparetest.Layouts(inputs, 3, 1, true)
	comparetest.Counted(inputs, func(side, round int) *result.Instructions {
		return pooledCounts(1200, 4230, 0, secs[side][round-1], bunching[side][round-1])
	})
	rep := comparetest.Compare(t, inputs)
	note := notesWith(rep.Notes, "pooler-instr/txn")
	if note == "" || strings.Contains(note, "±") || strings.Contains(note, "a second of wall time") ||
		!strings.Contains(note, "pooler-instr/txn at c=4 is the pooler's whole count per transaction") || !strings.Contains(note, "nothing is taken off") {
		t.Errorf("a fit that tells nothing: %q", note)
	}

	// Windows whose lengths tell a clear 4400 a second: the rate, and its
	// share of the count.
	secs = [2][]float64{{2, 6, 4}, {5, 3, 7}}
	inputs = comparetest.Files(t, fourClients(), []int{4}, 3)
	comparetest.Layouts(inputs, 3, 1, true)
	comparetest.Counted(inputs, func(side, round int) *result.Instructions {
		return pooledCounts(1200, 4230, 4400, secs[side][round-1], float64(10*round))
	})
	rep = comparetest.Compare(t, inputs)
	if note := notesWith(rep.Notes, "pooler-instr/txn"); !strings.Contains(note, "instructions a second of wall time") || !strings.Contains(note, " 440") {
		t.Errorf("a clear fit: %q", note)
	}
}

// fourClients are two sides with throughput at 4 clients.
func fourClients() []comparetest.Side {
	sides := comparetest.TwoSides()
	for _, s := range sides {
		s.TPS[4] = comparetest.Base2
	}
	return sides
}

// notesWith is the note that starts with prefix, "" when none does.
func notesWith(notes []string, prefix string) string {
	for _, n := range notes {
		if strings.HasPrefix(n, prefix) {
			return n
		}
	}
	return ""
}
