package script_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/script"
)

func mustParse(t *testing.T, src string) *script.Script {
	t.Helper()
	s, err := script.Parse("t.sql", src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return s
}

func newClient(t *testing.T, opts script.Options, scripts ...*script.Script) *script.Interp {
	t.Helper()
	p, err := script.NewProgram(scripts, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p.NewInterp(0)
}

// TestPrecedence checks the parse tree of expressions against exprparse.y's
// precedence and associativity, printed fully parenthesised.
func TestPrecedence(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"1 + 2 * 3", "(1 + (2 * 3))"},
		{"1 - 2 - 3", "((1 - 2) - 3)"},
		{"8 / 4 / 2 % 3", "(((8 / 4) / 2) % 3)"},
		{"-2 * 3", "((0 - 2) * 3)"},
		{"- -2", "(0 - (0 - 2))"},
		{"+2", "2"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"- 9223372036854775808 * 2", "(-9223372036854775808 * 2)"},
		{"~1 + 2", "(-1 # (1 + 2))"},
		{"~1 & 2", "((-1 # 1) & 2)"},
		{"~1 < 2", "((-1 # 1) < 2)"},
		{"1 | 2 # 3 & 4 << 5 >> 6", "(((((1 | 2) # 3) & 4) << 5) >> 6)"},
		{"1 + 2 << 3", "((1 + 2) << 3)"},
		{"1 | 2 = 3", "((1 | 2) = 3)"},
		{"1 > 2", "(2 < 1)"},
		{"1 >= 2", "(2 <= 1)"},
		{"1 != 2", "(1 <> 2)"},
		{"NOT 1 = 2", "(NOT (1 = 2))"},
		{"NOT true AND false", "((NOT TRUE) AND FALSE)"},
		{"NOT NOT true", "(NOT (NOT TRUE))"},
		{"true OR false AND false", "(TRUE OR (FALSE AND FALSE))"},
		{"1 = 1 IS TRUE", "((1 = 1) IS TRUE)"},
		{"NOT 1 IS NULL", "(NOT (1 IS NULL))"},
		{"1 IS NULL IS NULL", "((1 IS NULL) IS NULL)"},
		{"1 ISNULL = false", "((1 IS NULL) = FALSE)"},
		{"1 NOTNULL", "(NOT (1 IS NULL))"},
		{"1 IS NOT FALSE", "(NOT (1 IS FALSE))"},
		{"-1 IS NULL", "((0 - 1) IS NULL)"},
		{"2 * NOT true", "(2 * (NOT TRUE))"},
		{"1 = NOT 2 = 3", "(1 = (NOT (2 = 3)))"},
		{"CASE WHEN 1 THEN 2 WHEN 3 THEN 4 END", "(CASE WHEN 1 THEN 2 WHEN 3 THEN 4 ELSE NULL END)"},
		{"case when :a then 1 else 2 end + 1", "((CASE WHEN :a THEN 1 ELSE 2 END) + 1)"},
		{"1.5e3 + .5", "(1500.0 + 0.5)"},
		{"hash(1)", "hash(1, :default_seed)"},
		{"PERMUTE(1, 2)", "permute(1, 2, :default_seed)"},
		{"a_b_c(1)", ""},
		{"mod(7, 3) % 2", "((7 % 3) % 2)"},
	} {
		s, err := script.Parse("t.sql", `\set x `+tc.expr)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: parsed, want an error", tc.expr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		var b bytes.Buffer
		s.Describe(&b)
		if got := b.String(); !strings.Contains(got, ":x = "+tc.want+"\n") {
			t.Errorf("%s: got %s want :x = %s", tc.expr, got, tc.want)
		}
	}
}

func TestSQLCommands(t *testing.T) {
	s := mustParse(t, `-- leading comment
SELECT 1;   SELECT
  2   -- trailing comment with :x and ;
  ;
SELECT ';' , $$;$$, /* ; */ (1;2) ;
CREATE FUNCTION f() RETURNS int LANGUAGE sql
BEGIN ATOMIC
  SELECT 1;
  SELECT CASE WHEN true THEN 1 END;
END;
SELECT :a, ':a', :a::int, ::b, :1c, ":a" FROM t WHERE x = :b \; SELECT :a;
SELECT 1 \gset p_
UPDATE t SET x = 1
`)
	type want struct {
		line  int
		text  string
		stmts int
	}
	wants := []want{
		{2, "SELECT 1;", 1},
		{2, "SELECT 2 ;", 1},
		{5, "SELECT ';' , $$;$$, /* ; */ (1;2) ;", 1},
		{6, "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 1 END; END;", 1},
		{11, `SELECT :a, ':a', :a::int, ::b, :1c, ":a" FROM t WHERE x = :b ; SELECT :a;`, 2},
		{12, `SELECT 1 \gset p_`, 1},
		{13, "UPDATE t SET x = 1", 1},
	}
	if len(s.Commands) != len(wants) {
		var b bytes.Buffer
		s.Describe(&b)
		t.Fatalf("%d commands, want %d:\n%s", len(s.Commands), len(wants), b.String())
	}
	for i, w := range wants {
		c := s.Commands[i]
		if c.Kind != script.KindSQL || c.Line != w.line || c.Text != w.text || c.SQL.Statements != w.stmts {
			t.Errorf("command %d: kind %v line %d text %q statements %d; want line %d text %q statements %d",
				i, c.Kind, c.Line, c.Text, c.SQL.Statements, w.line, w.text, w.stmts)
		}
	}
	q := s.Commands[4].SQL
	if want := `SELECT $1, '$2', $3::int, ::b, :1c, "$4" FROM t WHERE x = $5 ; SELECT $6;`; q.Prepared != want || q.NParams != 6 {
		t.Errorf("prepared %q (%d params), want %q", q.Prepared, q.NParams, want)
	}
	g := s.Commands[5].SQL
	if g.Store != script.StoreGset || g.Prefix != "p_" {
		t.Errorf("gset: %v %q", g.Store, g.Prefix)
	}

	c := newClient(t, script.Options{Defines: map[string]string{"a": "x'y"}}, s)
	params, err := c.Params(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(params) != 6 || string(params[0]) != "x'y" || params[4] != nil {
		t.Errorf("params %q", params)
	}
	text, err := c.AppendSimple(nil, q)
	if err != nil {
		t.Fatal(err)
	}
	if want := `SELECT x'y, 'x'y', x'y::int, ::b, :1c, "x'y" FROM t WHERE x = :b ; SELECT x'y;`; string(text) != want {
		t.Errorf("simple %q, want %q", text, want)
	}
}

func TestMetaCommandsParse(t *testing.T) {
	s := mustParse(t, "\\SET x 1 + \\\n 2\n\\sleep 10ms\n\\sleep :d us\n\\Sleep 2\n\\setshell v echo ::lit :x\n\\shell true\n\\startpipeline\n\\syncpipeline\n\\endpipeline\nSELECT 1\n\\aset\n")
	kinds := []script.Kind{script.KindSet, script.KindSleep, script.KindSleep, script.KindSleep, script.KindSetShell,
		script.KindShell, script.KindStartPipeline, script.KindSyncPipeline, script.KindEndPipeline, script.KindSQL}
	if len(s.Commands) != len(kinds) {
		t.Fatalf("%d commands", len(s.Commands))
	}
	for i, k := range kinds {
		if s.Commands[i].Kind != k {
			t.Errorf("command %d is %v, want %v", i, s.Commands[i].Kind, k)
		}
	}
	if s.Commands[0].Text != `\SET x 1 + 2` || s.Commands[1].Line != 3 || s.Commands[9].SQL.Store != script.StoreAset {
		t.Errorf("text %q line %d store %v", s.Commands[0].Text, s.Commands[1].Line, s.Commands[9].SQL.Store)
	}
	if s.Commands[9].Text != `SELECT 1 \aset` {
		t.Errorf("text %q", s.Commands[9].Text)
	}
}

func TestSleep(t *testing.T) {
	s := mustParse(t, "\\sleep 10ms\n\\sleep 3\n\\sleep 250 us\n\\sleep :d ms\n\\sleep :neg\n\\sleep 5 S\n\\sleep :d\n\\sleep 3000 s\n")
	c := newClient(t, script.Options{Defines: map[string]string{"d": "7", "neg": "-1"}}, s)
	want := []time.Duration{10 * time.Millisecond, 3 * time.Second, 250 * time.Microsecond, 7 * time.Millisecond, 0, 5 * time.Second, 7 * time.Second, 0}
	for i, w := range want {
		next, d, err := c.Meta(s, i)
		if err != nil || next != i+1 || d != w {
			t.Errorf("command %d: %v %v %v, want %v", i, next, d, err, w)
		}
	}
}

func TestConditionalJumps(t *testing.T) {
	s := mustParse(t, `\if :a = 1
\set r 1
\elif :a = 2
\set r 2
\elif :a = 3
\if true
\set r 3
\endif
\else
\set r 4
\endif
`)
	for a, want := range map[string]string{"1": "1", "2": "2", "3": "3", "9": "4"} {
		c := newClient(t, script.Options{Defines: map[string]string{"a": a}}, s)
		var err error
		for pc := 0; pc < len(s.Commands) && err == nil; {
			pc, _, err = c.Meta(s, pc)
		}
		if got, _ := c.Var("r"); err != nil || got != want {
			t.Errorf("a=%s: r=%q err %v, want %s", a, got, err, want)
		}
	}
}

func TestStore(t *testing.T) {
	s := mustParse(t, "SELECT 1 \\gset p_\nSELECT 2 \\aset\n\\set z :p_one + :two\n")
	c := newClient(t, script.Options{}, s)
	if err := c.Store(s.Commands[0].SQL, []string{"one", "n"}, [][]byte{[]byte("40"), nil}); err != nil {
		t.Fatal(err)
	}
	if err := c.Store(s.Commands[1].SQL, []string{"two"}, [][]byte{[]byte("2")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Meta(s, 2); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"p_one": "40", "p_n": "", "two": "2", "z": "42"} {
		if got, ok := c.Var(name); !ok || got != want {
			t.Errorf("%s = %q %v, want %q", name, got, ok, want)
		}
	}
	err := c.Store(s.Commands[1].SQL, []string{"?column?"}, [][]byte{[]byte("1")})
	var re *script.RuntimeError
	if !errors.As(err, &re) || !strings.Contains(re.Msg, `invalid variable name: "?column?"`) {
		t.Errorf("storing ?column?: %v", err)
	}
	if err := script.RowCountError(s, s.Commands[0], 2); err.Error() != "t.sql:1: expected one row, got 2" {
		t.Errorf("RowCountError: %v", err)
	}
	// storing an empty value then using it in an expression fails
	if err := c.Store(s.Commands[1].SQL, []string{"two"}, [][]byte{nil}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Meta(s, 2); err == nil {
		t.Error("expression over an empty variable did not fail")
	}
}

func TestStoreAllocatesNothingForKnownNames(t *testing.T) {
	s := mustParse(t, "SELECT 1 AS x \\gset\nSELECT :x;\n")
	c := newClient(t, script.Options{}, s)
	names, vals := []string{"x"}, [][]byte{[]byte("12345")}
	allocs := testing.AllocsPerRun(100, func() {
		if err := c.Store(s.Commands[0].SQL, names, vals); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per Store", allocs)
	}
}

func TestRetryReplaysRandomValues(t *testing.T) {
	s := mustParse(t, "\\set r random(1, 1000000000)\n")
	c := newClient(t, script.Options{RandomSeed: 11}, s)
	c.Begin()
	c.Meta(s, 0)
	first, _ := c.Var("r")
	c.Retry()
	c.Meta(s, 0)
	again, _ := c.Var("r")
	c.Begin()
	c.Meta(s, 0)
	next, _ := c.Var("r")
	if first != again || first == next {
		t.Errorf("first %s, retried %s, next %s", first, again, next)
	}
}

func TestChooseFollowsWeights(t *testing.T) {
	a, b, z := mustParse(t, "SELECT 1;"), mustParse(t, "SELECT 2;"), mustParse(t, "SELECT 3;")
	a.Weight, b.Weight, z.Weight = 1, 3, 0
	c := newClient(t, script.Options{RandomSeed: 5}, a, b, z)
	var n [3]int
	for i := 0; i < 4000; i++ {
		n[c.Choose()]++
	}
	if n[2] != 0 || n[0] < 850 || n[0] > 1150 {
		t.Errorf("choices %v for weights 1, 3, 0", n)
	}
}

func TestProgramErrors(t *testing.T) {
	s := mustParse(t, "SELECT 1;")
	if _, err := script.NewProgram([]*script.Script{s}, script.Options{Defines: map[string]string{"1x": "y"}}); err == nil ||
		err.Error() != `option: invalid variable name: "1x"` {
		t.Errorf("bad -D name: %v", err)
	}
	s.Weight = 0
	if _, err := script.NewProgram([]*script.Script{s}, script.Options{}); err == nil {
		t.Error("zero total weight accepted")
	}
	if _, err := script.NewProgram(nil, script.Options{}); err == nil {
		t.Error("no script accepted")
	}
}

func TestDefinesOverrideBuiltins(t *testing.T) {
	s := mustParse(t, "SELECT :scale, :client_id, :default_seed, :random_seed;")
	c := newClient(t, script.Options{Scale: 3, RandomSeed: 99, Defines: map[string]string{"scale": "50", "default_seed": "7"}}, s)
	for name, want := range map[string]string{"scale": "50", "client_id": "0", "default_seed": "7", "random_seed": "99"} {
		if got, _ := c.Var(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestShell(t *testing.T) {
	s := mustParse(t, "\\setshell v echo '  42  '\n\\shell true\n\\setshell w printf ::x%s :v\n\\shell exit 3\n")
	c := newClient(t, script.Options{}, s)
	for pc := 0; pc < 2; pc++ {
		if _, _, err := c.Meta(s, pc); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := c.Var("v"); v != "42" {
		t.Errorf("v = %q", v)
	}
	if _, _, err := c.Meta(s, 2); err == nil || !strings.Contains(err.Error(), `must return an integer (not ":x42")`) {
		t.Errorf("printf: %v", err)
	}
	if _, _, err := c.Meta(s, 3); err == nil || !strings.Contains(err.Error(), "exit: could not launch shell command") {
		t.Errorf("exit 3: %v", err)
	}
}

func TestDebugOutput(t *testing.T) {
	s := mustParse(t, "\\set x debug(1.5) + debug(NULL IS NULL)\n")
	var b bytes.Buffer
	c := newClient(t, script.Options{DebugOutput: &b}, s)
	c.Meta(s, 0)
	if want := "debug(script=0,command=1): double 1.5\ndebug(script=0,command=1): boolean true\n"; b.String() != want {
		t.Errorf("debug output %q, want %q", b.String(), want)
	}
}

func TestSyntaxErrorFormat(t *testing.T) {
	_, err := script.Parse("bench.sql", "SELECT 1;\n\\set x (1 +\n")
	var se *script.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("%T %v", err, err)
	}
	want := "bench.sql:2:12: syntax error in command \"set\": unexpected end of line, expected an operand\n\\set x (1 +\n           ^ error found here"
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
}

func TestPipelineKindsAreTheEngines(t *testing.T) {
	s := mustParse(t, "\\startpipeline\n\\syncpipeline\n\\endpipeline\n")
	c := newClient(t, script.Options{}, s)
	for pc := range s.Commands {
		if next, d, err := c.Meta(s, pc); next != pc+1 || d != 0 || err != nil {
			t.Errorf("%d: %d %v %v", pc, next, d, err)
		}
	}
}

func TestScriptSharedByTwoPrograms(t *testing.T) {
	s := mustParse(t, "\\set b :a + 1\n")
	for _, a := range []string{"1", "2"} {
		c := newClient(t, script.Options{Defines: map[string]string{"zzz": "0", "a": a}}, s)
		if _, _, err := c.Meta(s, 0); err != nil {
			t.Fatal(err)
		}
	}
	other := mustParse(t, "SELECT 1;")
	c := newClient(t, script.Options{}, other)
	if _, _, err := c.Meta(s, 0); err == nil {
		t.Error("a script outside the program ran")
	}
}

func TestExtendedError(t *testing.T) {
	src := "SELECT " + strings.Repeat(":a, ", 255) + ":a;"
	s := mustParse(t, src)
	if err := s.ExtendedError(); err == nil || !strings.Contains(err.Error(), "statement has too many arguments (maximum is 255)") {
		t.Errorf("256 parameters: %v", err)
	}
	if err := mustParse(t, "SELECT :a;").ExtendedError(); err != nil {
		t.Error(err)
	}
}

func TestClientsInParallel(t *testing.T) {
	s := mustParse(t, tpcbLike)
	p, err := script.NewProgram([]*script.Script{s}, script.Options{Scale: 2, RandomSeed: 8, Clients: 4})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string)
	for id := 0; id < 4; id++ {
		go func() {
			c := p.NewInterp(id)
			var params [][]byte
			var buf []byte
			for i := 0; i < 200; i++ {
				params, buf = transaction(t, c, s, i%2 == 0, params, buf)
			}
			v, _ := c.Var("aid")
			done <- v
		}()
	}
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		seen[<-done] = true
	}
	if len(seen) < 2 {
		t.Errorf("clients drew the same values: %v", seen)
	}
}
