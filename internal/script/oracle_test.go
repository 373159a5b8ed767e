package script_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/script"
)

// The oracle files under testdata/oracle were recorded by record.sh from
// pgbench 15 itself. These tests replay each script with this package alone
// (no server): SQL commands are rendered as pgbench would send them and the
// INSERT INTO out rows are decoded from that text.

type oracleArgs struct {
	mode    string
	tx      int
	clients int
	scale   int
	seed    uint64
	defines map[string]string
	extra   []string // other -f scripts, NAME@WEIGHT, before the main one
}

// splitArgs splits a shell-like argument line (single quotes only).
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	in, has := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			in = !in
			has = true
		case c == ' ' && !in:
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteByte(c)
			has = true
		}
	}
	if has {
		out = append(out, cur.String())
	}
	return out
}

func readOracleArgs(t *testing.T, src string) oracleArgs {
	t.Helper()
	a := oracleArgs{mode: "simple", tx: 10, clients: 1, scale: 1, defines: map[string]string{}}
	var line string
	for _, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(l, "-- pgbench: ") {
			line = strings.TrimPrefix(l, "-- pgbench: ")
			break
		}
	}
	w := splitArgs(line)
	for i := 0; i < len(w); i++ {
		next := func() string { i++; return w[i] }
		switch {
		case w[i] == "-M":
			a.mode = next()
		case w[i] == "-t":
			a.tx, _ = strconv.Atoi(next())
		case w[i] == "-c":
			a.clients, _ = strconv.Atoi(next())
		case w[i] == "-j":
			next()
		case w[i] == "-s":
			a.scale, _ = strconv.Atoi(next())
		case strings.HasPrefix(w[i], "--random-seed="):
			a.seed, _ = strconv.ParseUint(strings.TrimPrefix(w[i], "--random-seed="), 10, 64)
		case w[i] == "-f":
			a.extra = append(a.extra, next())
		case w[i] == "-D":
			k, v, _ := strings.Cut(next(), "=")
			a.defines[k] = v
		default:
			t.Fatalf("unknown oracle argument %q", w[i])
		}
	}
	return a
}

type row struct{ k, v string }

// renderSQL returns the SQL text pgbench would send for cmd.
func renderSQL(c *script.Interp, q *script.SQL, mode string) (string, error) {
	if mode == "simple" {
		b, err := c.AppendSimple(nil, q)
		return string(b), err
	}
	params, err := c.Params(q, nil)
	if err != nil {
		return "", err
	}
	re := regexp.MustCompile(`\$(\d+)`)
	return re.ReplaceAllStringFunc(q.Prepared, func(m string) string {
		n, _ := strconv.Atoi(m[1:])
		if n < 1 || n > len(params) {
			return m
		}
		if params[n-1] == nil {
			return "NULL"
		}
		return "'" + strings.ReplaceAll(string(params[n-1]), "'", "''") + "'"
	}), nil
}

// sqlValue decodes the few SQL expressions the oracle scripts insert.
func sqlValue(t *testing.T, e string) string {
	t.Helper()
	e = strings.TrimSpace(e)
	if inner, ok := strings.CutPrefix(e, "coalesce("); ok {
		args := splitTop(strings.TrimSuffix(inner, ")"), ',')
		if v := strings.TrimSpace(args[0]); v != "NULL" {
			return sqlValue(t, v)
		}
		return sqlValue(t, args[1])
	}
	if l, r, ok := strings.Cut(e, "||"); ok {
		return sqlValue(t, l) + sqlValue(t, r)
	}
	if i := strings.LastIndex(e, "::"); i > 0 && !strings.HasSuffix(e, "'") {
		v := sqlValue(t, e[:i])
		if v == "FALSE" || v == "TRUE" {
			v = strings.ToLower(v)
		}
		return v
	}
	switch {
	case strings.HasPrefix(e, "$$"):
		return strings.TrimSuffix(strings.TrimPrefix(e, "$$"), "$$")
	case strings.HasPrefix(e, "E'"):
		s := e[2 : len(e)-1]
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
		}
		return b.String()
	case strings.HasPrefix(e, "'"):
		return strings.ReplaceAll(e[1:len(e)-1], "''", "'")
	}
	return e
}

// insertRows decodes "INSERT INTO out VALUES (k, v), ..." (comments removed).
func insertRows(t *testing.T, sql string) []row {
	t.Helper()
	var rows []row
	for _, stmt := range splitTop(sql, ';') {
		stmt = regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(stmt, "")
		stmt = strings.TrimSpace(stmt)
		if stmt == "" {
			continue
		}
		i := strings.Index(stmt, "VALUES")
		if !strings.HasPrefix(stmt, "INSERT INTO out") || i < 0 {
			continue // other SQL needs a server
		}
		for _, tuple := range splitTop(stmt[i+len("VALUES"):], ',') {
			tuple = strings.TrimSpace(tuple)
			tuple = strings.TrimSuffix(strings.TrimPrefix(tuple, "("), ")")
			parts := splitTop(tuple, ',')
			if len(parts) != 2 {
				t.Fatalf("bad tuple %q", tuple)
			}
			rows = append(rows, row{sqlValue(t, parts[0]), sqlValue(t, parts[1])})
		}
	}
	return rows
}

// splitTop splits s at sep outside quotes, dollar quotes and parentheses.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			esc := i > 0 && s[i-1] == 'E'
			for i++; i < len(s); i++ {
				if esc && s[i] == '\\' {
					i++
					continue
				}
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case c == '$' && strings.HasPrefix(s[i:], "$$"):
			j := strings.Index(s[i+2:], "$$")
			if j >= 0 {
				i += j + 3
			}
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

type oracleOut struct {
	header string
	rows   []row
	errs   []string
}

func readOracleOut(t *testing.T, path string) oracleOut {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var o oracleOut
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "# "):
			o.header = l
		case strings.HasPrefix(l, "pgbench: error: "):
			o.errs = append(o.errs, strings.TrimPrefix(l, "pgbench: error: "))
		default:
			k, v, _ := strings.Cut(l, "\t")
			o.rows = append(o.rows, row{k, v})
		}
	}
	return o
}

// runOracle runs the script like pgbench -t tx with the given clients and
// returns the rows each client's INSERTs would write, and the first error.
func runOracle(t *testing.T, name, src string, a oracleArgs) ([]row, error) {
	t.Helper()
	var scripts []*script.Script
	for _, e := range a.extra {
		file, w, _ := strings.Cut(e, "@")
		b, err := os.ReadFile(filepath.Join(filepath.Dir(name), file))
		if err != nil {
			t.Fatal(err)
		}
		x, err := script.Parse(file, string(b))
		if err != nil {
			t.Fatal(err)
		}
		if w != "" {
			x.Weight, _ = strconv.Atoi(w)
		}
		scripts = append(scripts, x)
	}
	s, err := script.Parse(name, src)
	if err != nil {
		return nil, err
	}
	scripts = append(scripts, s)
	p, err := script.NewProgram(scripts, script.Options{
		Scale: a.scale, RandomSeed: a.seed, Defines: a.defines, Clients: a.clients})
	if err != nil {
		return nil, err
	}
	var rows []row
	for id := 0; id < a.clients; id++ {
		c := p.NewInterp(id)
		for tx := 0; tx < a.tx; tx++ {
			s := scripts[c.Choose()]
			c.Begin()
			for pc := 0; pc < len(s.Commands); {
				cmd := s.Commands[pc]
				switch cmd.Kind {
				case script.KindSQL:
					sql, err := renderSQL(c, cmd.SQL, a.mode)
					if err != nil {
						return rows, err
					}
					rows = append(rows, insertRows(t, sql)...)
					pc++
				case script.KindStartPipeline, script.KindSyncPipeline, script.KindEndPipeline:
					pc++
				default:
					next, _, err := c.Meta(s, pc)
					if err != nil {
						return rows, err
					}
					pc = next
				}
			}
		}
	}
	return rows, nil
}

func TestOracleScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/oracle/*.sql")
	if len(files) == 0 {
		t.Fatal("no oracle scripts")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(src), `\gset`) || strings.Contains(string(src), `\aset`) {
				// needs a server; checked end to end by the engine's tests
				if _, err := script.Parse(f, string(src)); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := readOracleOut(t, strings.TrimSuffix(f, ".sql")+".out")
			a := readOracleArgs(t, string(src))
			got, err := runOracle(t, f, string(src), a)
			if len(want.errs) > 0 {
				if err == nil {
					t.Errorf("pgbench failed with %q, we did not", want.errs)
				} else if !strings.Contains(err.Error(), want.errs[0]) {
					t.Errorf("error %q, pgbench said %q", err, want.errs[0])
				}
			} else if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if a.clients > 1 {
				sortRows(got)
				sortRows(want.rows)
			}
			for i := 0; i < len(got) || i < len(want.rows); i++ {
				var g, w row
				if i < len(got) {
					g = got[i]
				}
				if i < len(want.rows) {
					w = want.rows[i]
				}
				if g != w {
					t.Errorf("row %d: got %q = %q, pgbench %q = %q", i, g.k, g.v, w.k, w.v)
				}
			}
		})
	}
}

func sortRows(r []row) {
	sort.Slice(r, func(i, j int) bool { return r[i].k+"\x00"+r[i].v < r[j].k+"\x00"+r[j].v })
}

var (
	parseErrRe = regexp.MustCompile(`^(\S+):(\d+): (.*)$`)
	abortRe    = regexp.MustCompile(`^client 0 aborted in command (\d+) \((\w+)\) of script 0; (.*)$`)
)

func TestOracleErrors(t *testing.T) {
	files, _ := filepath.Glob("testdata/oracle/errors/*.sql")
	if len(files) == 0 {
		t.Fatal("no oracle error scripts")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		t.Run(name, func(t *testing.T) {
			srcb, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src := string(srcb)
			errText, err := os.ReadFile(strings.TrimSuffix(f, ".sql") + ".err")
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimRight(string(errText), "\n"), "\n")
			var pg []string
			caret := -1
			for _, l := range lines[1:] {
				if m, ok := strings.CutPrefix(l, "pgbench: error: "); ok {
					pg = append(pg, m)
				} else if i := strings.Index(l, "^ error found here"); i >= 0 {
					caret = i + 1
				}
			}
			a := readOracleArgs(t, src)
			a.tx = 1
			_, err = runOracle(t, f, src, a)
			if len(pg) == 0 {
				if err != nil {
					t.Fatalf("pgbench ran this script, we failed: %v", err)
				}
				return
			}
			first := pg[0]
			var se *script.SyntaxError
			var re *script.RuntimeError
			switch {
			case strings.HasPrefix(first, "condition error") || strings.HasPrefix(first, "empty command list"):
				if !errors.As(err, &se) {
					t.Fatalf("want syntax error %q, got %v", first, err)
				}
				if want := strings.ReplaceAll(first, "errors/", "testdata/oracle/errors/"); se.Msg != want {
					t.Errorf("message %q, pgbench %q", se.Msg, want)
				}
			case parseErrRe.MatchString(first) && !strings.HasPrefix(first, "client "):
				m := parseErrRe.FindStringSubmatch(first)
				if !errors.As(err, &se) {
					t.Fatalf("want syntax error %q, got %v", first, err)
				}
				wantLine, _ := strconv.Atoi(m[2])
				if se.Line != wantLine {
					t.Errorf("line %d, pgbench %d", se.Line, wantLine)
				}
				if !strings.HasPrefix(se.Msg, m[3]) {
					t.Errorf("message %q, pgbench %q", se.Msg, m[3])
				}
				if caret > 0 && se.Column != caret {
					t.Errorf("column %d, pgbench's caret at %d\n%v", se.Column, caret, se)
				}
			default:
				// a run-time abort: the meta-command ones are ours to match
				var ab []string
				for _, l := range pg {
					if m := abortRe.FindStringSubmatch(l); m != nil {
						ab = m
					}
				}
				if ab == nil || ab[2] == "gset" || ab[2] == "aset" || strings.Contains(ab[2], "pipeline") || len(pg) < 2 {
					// SQL, row-count and pipeline failures belong to the engine
					if _, perr := script.Parse(f, src); perr != nil {
						t.Fatalf("pgbench parsed this script, we did not: %v", perr)
					}
					return
				}
				if !errors.As(err, &re) {
					t.Fatalf("want run-time error %q, got %v", first, err)
				}
				if !strings.HasPrefix(re.Msg, first) {
					t.Errorf("message %q, pgbench %q", re.Msg, first)
				}
				s, _ := script.Parse(f, src)
				n, _ := strconv.Atoi(ab[1])
				if want := s.Commands[n].Line; re.Line != want {
					t.Errorf("line %d, want %d (command %d)", re.Line, want, n)
				}
			}
		})
	}
}

func ExampleScript_Describe() {
	s, err := script.Parse("bench.sql", `\set aid random(1, 100000 * :scale)
\if :aid % 2 = 0
SELECT abalance FROM pgbench_accounts WHERE aid = :aid \gset
\else
\sleep 1 ms
\endif
`)
	if err != nil {
		fmt.Println(err)
		return
	}
	s.Describe(os.Stdout)
	// Output:
	// script bench.sql (weight 1, 6 commands)
	//   0  line 1    set           :aid = random(1, (100000 * :scale))
	//   1  line 2    if            ((:aid % 2) = 0)  (false: goto 3, endif 5)
	//   2  line 3    sql           SELECT abalance FROM pgbench_accounts WHERE aid = $1
	//                         $1 = :aid
	//                         \gset into <column>
	//   3  line 4    else          (endif 5)
	//   4  line 5    sleep         1 ms
	//   5  line 6    endif
}
