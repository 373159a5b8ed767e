package plan

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/target"
)

// The wrapper a counted run puts in $PGSCALE_MICRO_EXEC: the format's
// environment (GODEBUG added to, not replaced), valgrind with its
// options, the program's own arguments, then those that run one
// benchmark for N iterations, each quoted for sh.
func TestMicroCountScript(t *testing.T) {
	f, err := micro.LookupFormat("go")
	if err != nil {
		t.Fatal(err)
	}
	c := &microCount{valgrind: &target.Valgrind{Bin: "/usr/bin/valgrind", Setarch: "/usr/bin/setarch"}, counting: f.Count,
		options: []string{"--tool=callgrind", "-q"}}
	dir := t.TempDir()
	s := c.script(dir, "BenchmarkSum/n=1000", 6115)
	for _, w := range []string{
		`export GODEBUG="${GODEBUG:+$GODEBUG,}"'asyncpreemptoff=1,cpu.rdtscp=off'`,
		"export GOMAXPROCS='1'",
		`exec '/usr/bin/setarch' "$(uname -m)" '-R' '/usr/bin/valgrind' '--tool=callgrind' '-q' '--callgrind-out-file=` + filepath.Join(dir, "callgrind.out.%p") + `' "$@" '-test.run=^$' '-test.bench=^BenchmarkSum$/^n=1000$' '-test.benchtime=6115x' '-test.count=1'`,
	} {
		if !strings.Contains(s, w) {
			t.Errorf("the script lacks %s:\n%s", w, s)
		}
	}
	if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s", err, out)
	}
	if q := shellQuote(`it's`); q != `'it'\''s'` {
		t.Errorf("shellQuote: %s", q)
	}
}

// A benchmark's N takes about microCountBudget natively.
func TestCalibratedIters(t *testing.T) {
	for _, tc := range []struct {
		s    micro.Sample
		want int
	}{
		{micro.Sample{Values: []micro.Value{{Unit: "ns/op", Value: 400}}}, 25000},
		{micro.Sample{Values: []micro.Value{{Unit: "ns/op", Value: 3e7}}}, 1},
		{micro.Sample{Iters: 77, Values: []micro.Value{{Unit: "latency", Value: 3}}}, 77},
		{micro.Sample{Values: []micro.Value{{Unit: "latency", Value: 3}}}, 1000},
	} {
		if got := calibratedIters(tc.s); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.s, got, tc.want)
		}
	}
}
