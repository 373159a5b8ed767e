package compare_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/result"
)

// The machine's noise: other processes took 25 % more of the machine
// during the candidate's steps, and the hypervisor stole 3 points more:
// its context switches and CPU times per transaction are flagged, in the
// machine's words and on the findings; the baseline's drift is said.
func TestMachineFlagsContention(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1}, 6)
	for side, in := range inputs {
		for i := range in.File.Steps {
			s := &in.File.Steps[i]
			busy, steal := 0.5, 0.0
			if side == 1 {
				busy, steal = 0.8, 0.03
			}
			txns := float64(s.Summary.Transactions)
			s.Probes = &result.Probes{ElapsedS: 3}
			s.Probes.SetProcess(&result.ProcessStats{CPUs: 2,
				Host:      result.HostStat{BusyShare: busy, StealShare: steal},
				Server:    &result.ProcGroup{Processes: 2, CPUS: 1e-5 * txns * (1 + 0.1*float64(side)), UserS: 0.8e-5 * txns, SysS: 0.2e-5 * txns, VoluntaryCtx: int64(2 * txns * (1 + 0.3*float64(side)))},
				Generator: result.ProcGroup{Processes: 1, CPUS: 0.5e-5 * txns}})
		}
	}
	rep := comparetest.Compare(t, inputs, "server-ctx/txn=+5%", "server-cpu/txn=+5%")
	m := rep.Machine
	if m == nil || len(m.Sides) != 2 {
		t.Fatalf("machine %+v", m)
	}
	if !m.Flagged("patch", "server-ctx/txn") || !m.Flagged("patch", "server-cpu/txn") || m.Flagged("patch", "tps") {
		t.Errorf("flags %+v", m.Flags)
	}
	text := strings.Join(m.Text, "\n")
	for _, w := range []string{"master: other processes ", "patch: other processes ", "steal 3.0%", "moved ±",
		"server-ctx/txn move with other processes' contention, which differed between the targets (other processes took"} {
		if !strings.Contains(text, w) {
			t.Errorf("the machine's words lack %q:\n%s", w, text)
		}
	}
	flagged := 0
	for _, f := range rep.Findings[0] {
		if f.Assessment.Measure.Name == "server-ctx/txn" {
			if !f.Flagged || !strings.Contains(f.Why, "contention") {
				t.Errorf("finding %s not flagged: %s", f.Assessment.Measure.Key(), f.Why)
			}
			flagged++
		}
	}
	if flagged != 1 {
		t.Errorf("server-ctx/txn +30%% against +5%%: %d findings, want 1 (%s)", flagged, rep.Headline())
	}
}
