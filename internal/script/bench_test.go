package script_test

import (
	"testing"

	"github.com/pgscale/pgscale/internal/script"
)

const (
	selectOnly = "\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n"
	tpcbLike   = `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`
)

// transaction runs one transaction of s the way the engine will, without a
// server: parameters (extended mode) or text (simple mode) for each SQL command.
func transaction(tb testing.TB, c *script.Interp, s *script.Script, simple bool, params [][]byte, buf []byte) ([][]byte, []byte) {
	c.Begin()
	var err error
	for pc := 0; pc < len(s.Commands); {
		cmd := s.Commands[pc]
		if cmd.Kind == script.KindSQL {
			if simple {
				buf, err = c.AppendSimple(buf[:0], cmd.SQL)
			} else {
				params, err = c.Params(cmd.SQL, params)
			}
			if err != nil {
				tb.Fatal(err)
			}
			pc++
			continue
		}
		pc, _, err = c.Meta(s, pc)
		if err != nil {
			tb.Fatal(err)
		}
	}
	return params, buf
}

func newBenchClient(tb testing.TB, src string) (*script.Interp, *script.Script) {
	s, err := script.Parse("builtin", src)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := script.NewProgram([]*script.Script{s}, script.Options{Scale: 10, RandomSeed: 1})
	if err != nil {
		tb.Fatal(err)
	}
	return p.NewInterp(0), s
}

func TestBuiltinScriptsDoNotAllocate(t *testing.T) {
	for _, src := range []string{selectOnly, tpcbLike} {
		for _, simple := range []bool{false, true} {
			c, s := newBenchClient(t, src)
			params, buf := transaction(t, c, s, simple, nil, nil)
			allocs := testing.AllocsPerRun(200, func() {
				params, buf = transaction(t, c, s, simple, params, buf)
			})
			if allocs != 0 {
				t.Errorf("simple=%v: %.1f allocations per transaction, want 0", simple, allocs)
			}
		}
	}
}

func BenchmarkSelectOnlyExtended(b *testing.B) {
	c, s := newBenchClient(b, selectOnly)
	params, buf := transaction(b, c, s, false, nil, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		params, buf = transaction(b, c, s, false, params, buf)
	}
}

func BenchmarkSelectOnlySimple(b *testing.B) {
	c, s := newBenchClient(b, selectOnly)
	params, buf := transaction(b, c, s, true, nil, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		params, buf = transaction(b, c, s, true, params, buf)
	}
}

func BenchmarkTPCBLikeExtended(b *testing.B) {
	c, s := newBenchClient(b, tpcbLike)
	params, buf := transaction(b, c, s, false, nil, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		params, buf = transaction(b, c, s, false, params, buf)
	}
}
