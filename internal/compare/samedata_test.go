package compare_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/result"
)

// copiesOf counts instructions as a run on copies does: both sides of a
// layout alike to the instruction, the layouts apart by what each layout's
// data made (a few per cent).
func copiesOf(side, round int) *result.Instructions {
	v := 100000.0 * (1 + 0.02*float64(round%3))
	return &result.Instructions{Tool: "callgrind", Transactions: 100, ClientBackends: uint64(v * 100), PerTxn: v}
}

// A counted run whose layouts record that the candidate ran on copies of
// the baseline's data says what its interval covers: the code, and the
// layouts' data; with one layout, that data alone; a target that made its
// own says why and what that adds.
func TestCountedOnCopies(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1}, 4)
	comparetest.Layouts(inputs, 4, 1, true)
	comparetest.Counted(inputs, copiesOf)
	ab := inputs[0].File.AB
	for i := range ab.Layouts {
		ab.Layouts[i].Data = &result.LayoutData{From: "master", Copies: []string{"patch"}}
	}
	rep := comparetest.Compare(t, inputs, "instr/txn=+1%")
	notes := strings.Join(rep.Notes, "\n")
	if !strings.Contains(notes, "paired on byte-identical copies of each layout's data (made by master, copied to patch): the interval covers the code and 4 layouts of data") ||
		strings.Contains(notes, "each made every target's server anew") {
		t.Errorf("notes:\n%s", notes)
	}
	if a := rowOf(t, rep, "instr/txn", "c=1"); a.Hi-a.Lo > 1e-9 || a.Outcome.String() != "pass" {
		t.Errorf("instr/txn on copies: %v %v..%v, %s; want no width, pass", a.Change, a.Lo, a.Hi, a.Outcome)
	}

	ab.Layouts[2].Data = &result.LayoutData{From: "master", Own: map[string]string{"patch": "its catalog version number is 2, the data's 1"}}
	rep = comparetest.Compare(t, inputs)
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "patch made data of its own (its catalog version number is 2, the data's 1): its interval covers what its set-up builds differently too") {
		t.Errorf("own data: notes:\n%s", notes)
	}

	inputs = comparetest.Files(t, comparetest.TwoSides(), []int{1}, 4)
	comparetest.Layouts(inputs, 4, 4, false)
	comparetest.Counted(inputs, copiesOf)
	inputs[0].File.AB.Layouts[0].Data = &result.LayoutData{From: "master", Copies: []string{"patch"}}
	rep = comparetest.Compare(t, inputs)
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "counted on one cluster layout, kept for the whole run, paired on byte-identical copies of its data") ||
		!strings.Contains(notes, "the interval does not cover data made again") {
		t.Errorf("one layout: notes:\n%s", notes)
	}
}

// A round whose count was lost on one side (the probe could not connect
// under load) is left out of the comparison: the rounds and layouts it
// says it rests on are those the intervals use, and a note says the
// round, the target and the cause.
func TestLostCountLeavesTheRoundOut(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1}, 4)
	comparetest.Layouts(inputs, 4, 1, true)
	comparetest.Counted(inputs, copiesOf)
	s := &inputs[1].File.Steps[1] // patch, round 2
	s.Probes = &result.Probes{Unavailable: []result.ProbeUnavailable{{Probe: "instructions", Reason: "connect: timeout: context deadline exceeded"}}}
	rep := comparetest.Compare(t, inputs)
	if rep.Rounds != 3 || rep.Layouts != 3 || rep.Incomplete != "3 of 4 rounds complete" {
		t.Errorf("%d rounds on %d layouts, incomplete %q; want 3 on 3, 3 of 4 complete", rep.Rounds, rep.Layouts, rep.Incomplete)
	}
	want := "round 2 is left out: patch's count at 1 client was lost (probe instructions unavailable: connect: timeout: context deadline exceeded)"
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, want) {
		t.Errorf("notes:\n%s\nwant %q", notes, want)
	}
	a := rowOf(t, rep, "instr/txn", "c=1")
	if a.N1 != 3 {
		t.Errorf("instr/txn rests on %d values, want 3", a.N1)
	}
	for _, w := range a.Warnings {
		if strings.Contains(w.Error(), "not finite") {
			t.Errorf("the round was dropped silently again: %v", w)
		}
	}
}
