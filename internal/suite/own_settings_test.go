package suite_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/suite"
)

// A cells: entry may give its cells settings of their own — what to count,
// the client counts, the step's length, the warm-up and the rounds — in
// place of the suite's: the counted cells decide, the native ones are
// measured beside them. An axis only such an entry names is used; a
// bound is checked at each cell's own client counts; two entries setting
// one key in one cell, or an entry with nothing, are refused at their
// line.
func TestCellsSettingsOfTheirOwn(t *testing.T) {
	src := `name: parts
targets: ["a=settings:", "b=settings:"]
matrix:
  measure: [counted, native]
cells:
  - where: measure=native
    count: none
    clients: [8]
    duration: 2s
    warmup: 0.5s
    rounds: auto:6
count: instructions
clients: [1, 4]
transactions: 200
rounds: auto:4
bounds:
  - {bound: "instr/txn@c=1=+1%", cells: measure=counted}
  - {bound: "tps=-5% if decidable", cells: measure=native}
`
	s, err := suite.Parse("parts.yaml", "", "parts", []byte(src), false)
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	counted, native := s.CellLoad(cells[0]), s.CellLoad(cells[1])
	if counted.Own || !counted.Count.Instructions || counted.Transactions != 200 || len(counted.Clients) != 2 || counted.Rounds.Max != 4 {
		t.Errorf("counted: %+v", counted)
	}
	if !native.Own || native.Count.Instructions || native.Transactions != 0 || native.Duration.Seconds() != 2 || native.Clients[0] != 8 ||
		native.Warmup.Seconds() != 0.5 || native.Rounds.Max != 6 {
		t.Errorf("native: %+v", native)
	}
	bs, err := s.BoundsFor(cells[1])
	if err != nil || len(bs) != 1 || !bs[0].IfDecidable || bs[0].Measure != "tps" {
		t.Errorf("native bounds: %v %v", bs, err)
	}
	// --rounds replaces every cell's rounds.
	s.SetRounds(counted.Rounds)
	if r := s.CellLoad(cells[1]).Rounds; r.Max != 4 {
		t.Errorf("after SetRounds, native rounds %+v", r)
	}

	for _, bad := range []struct{ edit, want string }{
		{"  - {bound: \"instr/txn@c=1=+1%\", cells: measure=counted}\n", "parts.yaml:18:5: cell measure=counted: bound \"tps@c=8=-5%\": matches no measure"},
		{"    count: none\n", "parts.yaml:6:10: cells: give targets:"},
		{"    rounds: auto:6\n", "parts.yaml:12:10: cell measure=native gets clients: from cells[0] too"},
	} {
		text := src
		switch bad.edit {
		case "  - {bound: \"instr/txn@c=1=+1%\", cells: measure=counted}\n":
			text = strings.Replace(src, "  - {bound: \"tps=-5% if decidable\", cells: measure=native}\n", "  - tps@c=8=-5%\n", 1)
		case "    count: none\n":
			text = strings.Replace(src, "    count: none\n    clients: [8]\n    duration: 2s\n    warmup: 0.5s\n    rounds: auto:6\n", "", 1)
		case "    rounds: auto:6\n":
			text = strings.Replace(src, "    rounds: auto:6\n", "    rounds: auto:6\n  - where: measure=native\n    clients: [2]\n", 1)
		}
		_, err := suite.Parse("parts.yaml", "", "parts", []byte(text), false)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("want %q, got %v", bad.want, err)
		}
	}
}
