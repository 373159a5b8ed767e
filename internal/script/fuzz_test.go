package script_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/script"
)

// FuzzParse checks that Parse never panics, that it fails only with a
// *SyntaxError, and that what it accepts can be described and interpreted.
// Seeds: testdata/fuzz/FuzzParse plus every oracle script.
func FuzzParse(f *testing.F) {
	for _, pat := range []string{"testdata/oracle/*.sql", "testdata/oracle/errors/*.sql"} {
		files, _ := filepath.Glob(pat)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := script.Parse("fuzz.sql", src)
		if err != nil {
			var se *script.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error is %T, not *SyntaxError: %v", err, err)
			}
			_ = se.Error()
			return
		}
		var b strings.Builder
		s.Describe(&b)
		if strings.Contains(strings.ToLower(src), "shell") {
			return // never run arbitrary shell commands
		}
		p, err := script.NewProgram([]*script.Script{s}, script.Options{Scale: 1, RandomSeed: 3})
		if err != nil {
			t.Fatal(err)
		}
		c := p.NewInterp(0)
		c.Begin()
		var params [][]byte
		var buf []byte
		steps := 0
		for pc := 0; pc < len(s.Commands) && steps < 1000; steps++ {
			cmd := s.Commands[pc]
			if cmd.Kind == script.KindSQL {
				if params, err = c.Params(cmd.SQL, params); err != nil {
					t.Fatal(err)
				}
				if len(params) != cmd.SQL.NParams {
					t.Fatalf("%d params for %d placeholders", len(params), cmd.SQL.NParams)
				}
				if buf, err = c.AppendSimple(buf[:0], cmd.SQL); err != nil {
					t.Fatal(err)
				}
				pc++
				continue
			}
			next, d, err := c.Meta(s, pc)
			if d < 0 || d > 1<<31*time.Microsecond {
				t.Fatalf("sleep %v", d)
			}
			if err != nil {
				var re *script.RuntimeError
				if !errors.As(err, &re) {
					t.Fatalf("error is %T, not *RuntimeError: %v", err, err)
				}
				return
			}
			if next <= pc && cmd.Kind != script.KindIf {
				t.Fatalf("command %d (%s) went back to %d", pc, cmd.Kind, next)
			}
			if next <= pc || next > len(s.Commands) {
				t.Fatalf("command %d (%s) jumped to %d", pc, cmd.Kind, next)
			}
			pc = next
		}
	})
}

// FuzzExpression evaluates arbitrary \set expressions: no panic, and errors
// are *SyntaxError at parse time or *RuntimeError at run time.
func FuzzExpression(f *testing.F) {
	for _, e := range []string{
		"1 + 2 * 3", "-9223372036854775808 / -1", "random(1, 10)", "CASE WHEN 1 THEN 2 ELSE 3 END",
		"permute(5, 10, 3)", "hash_fnv1a(:x, 5)", "least(1, 2.5, NULL)", "1 << 65", "int(1e300)",
		"random_zipfian(1, 100, 1.5)", "random_gaussian(1, 10, 2.5)", "NOT true IS NULL", "~ 1 + 2",
		"abs(true)", "pow(-8, 0.5)", "1 = 1 AND 2 < 3 OR false",
	} {
		f.Add(e)
	}
	f.Fuzz(func(t *testing.T, e string) {
		if strings.ContainsAny(e, "\n\\") {
			return
		}
		s, err := script.Parse("fuzz.sql", "\\set x 42\n\\set r "+e+"\n")
		if err != nil {
			var se *script.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error is %T: %v", err, err)
			}
			return
		}
		p, err := script.NewProgram([]*script.Script{s}, script.Options{RandomSeed: 9})
		if err != nil {
			t.Fatal(err)
		}
		c := p.NewInterp(0)
		if _, _, err := c.Meta(s, 0); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Meta(s, 1); err != nil {
			var re *script.RuntimeError
			if !errors.As(err, &re) {
				t.Fatalf("error is %T: %v", err, err)
			}
		}
	})
}
