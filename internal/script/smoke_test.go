package script_test

import (
	"testing"

	"github.com/pgscale/pgscale/internal/script"
)

func TestSelectOnlySmoke(t *testing.T) {
	s, err := script.Parse("builtin:select-only", "\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n")
	if err != nil {
		t.Fatal(err)
	}
	p, err := script.NewProgram([]*script.Script{s}, script.Options{Scale: 10, RandomSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := p.NewInterp(0)
	next, _, err := c.Meta(s, 0)
	if err != nil || next != 1 {
		t.Fatalf("Meta: %d %v", next, err)
	}
	q := s.Commands[1].SQL
	if q.Prepared != "SELECT abalance FROM pgbench_accounts WHERE aid = $1;" || q.NParams != 1 {
		t.Fatalf("prepared %q", q.Prepared)
	}
	params, err := c.Params(q, nil)
	if err != nil || len(params) != 1 {
		t.Fatal(params, err)
	}
	v, _ := c.Var("aid")
	if string(params[0]) != v {
		t.Fatalf("param %q var %q", params[0], v)
	}
}
