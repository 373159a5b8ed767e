package micro_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/micro"
)

// parse reads testdata/FILE in FORMAT.
func parse(t *testing.T, format, file string) []micro.Sample {
	t.Helper()
	f, err := micro.LookupFormat(format)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// show writes samples as "NAME UNIT=VALUE[^] ..." lines (^ marks a
// higher-better measure).
func show(ss []micro.Sample) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(s.Name)
		for _, v := range s.Values {
			fmt.Fprintf(&b, " %s=%.6g", v.Unit, v.Value)
			if v.Higher {
				b.WriteString("^")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ format, file, want string }{
		{"go", "go.txt", `BenchmarkSum/n=1000 ns/op=641.3 cpu-ns/op=378 B/op=0 allocs/op=0
BenchmarkChecksum ns/op=3524 MB/s=18598.1^ cpu-ns/op=1569 B/op=1 allocs/op=0
BenchmarkReverse ns/op=2719
`},
		// Google Benchmark's user guide's JSON example, plus an
		// aggregate (left out), a run in microseconds with a user
		// counter and a run of four threads.
		{"gbench", "gbench.json", `BM_SetInsert/1024/1 ns/op=29275 cpu-ns/op=29836 bytes_per_second=134066^ items_per_second=33516^
BM_SetInsert/1024/8 ns/op=32317 cpu-ns/op=32429 bytes_per_second=986770^ items_per_second=246693^
BM_SetInsert/1024/10 ns/op=32724 cpu-ns/op=33355 bytes_per_second=1.19923e+06^ items_per_second=299807^
BM_UserCounter ns/op=1500 cpu-ns/op=1250 Foo=7
BM_Contended/threads:4 ns/op=40 cpu-ns/op=160
`},
		{"pytest", "pytest.json", `tests/test_sort.py::test_fast ns/op=170 items=1000
tests/test_sort.py::test_slow ns/op=1.05e+06
`},
		// Bencher's documented BMF example, with a throughput.
		{"bmf", "bmf.json", `bencher::mock_0 latency=88
bencher::mock_1 latency=87 throughput=11.36^
`},
		// Rust's libtest lines (criterion's --output-format bencher
		// writes the same), among cargo's own output.
		{"libtest", "libtest.txt", `bench_fib_10 ns/op=190
fib/20 ns/op=31912
parse_big ns/op=1.23457e+06 MB/s=850^
`},
		// divan's table: a group, a "Timer precision" line inside the
		// table, an allocation profile's and a throughput's rows.
		{"divan", "divan.txt", `example/fibonacci/10 ns/op=197.5 mean-ns/op=198.1
example/fibonacci/20 ns/op=24330 mean-ns/op=24410
example/Line A ns/op=128.4 mean-ns/op=130.5
example/copy ns/op=2.204e+07 mean-ns/op=2.21e+07
`},
	} {
		t.Run(tc.format, func(t *testing.T) {
			if got := show(parse(t, tc.format, tc.file)); got != tc.want {
				t.Errorf("got\n%swant\n%s", got, tc.want)
			}
		})
	}
}

// A Google Benchmark run of several threads says how many (a counted run
// leaves it out); one of one thread says nothing.
func TestGbenchThreads(t *testing.T) {
	for _, s := range parse(t, "gbench", "gbench.json") {
		want := map[string]int{"BM_Contended/threads:4": 4}[s.Name]
		if s.Threads != want {
			t.Errorf("%s: %d threads, want %d", s.Name, s.Threads, want)
		}
	}
}

// Output that is not in the format is an error that says what and where.
func TestFormatErrors(t *testing.T) {
	for _, tc := range []struct{ format, out, want string }{
		{"go", "BenchmarkX 10 abc ns/op\n", "go benchmark format, line 1: "},
		{"gbench", "not json", "google benchmark JSON: "},
		{"gbench", `{"benchmarks":[{"name":"BM_X","error_occurred":true,"error_message":"oops"}]}`, "google benchmark JSON: BM_X failed: oops"},
		{"gbench", `{"benchmarks":[{"name":"BM_X","time_unit":"ks"}]}`, `unknown time_unit "ks"`},
		{"pytest", `{"benchmarks":[{"name":"test_x"}]}`, "pytest-benchmark JSON: test_x has no stats"},
		{"bmf", `{"b":{"latency":{}}}`, "bencher metric format: b: measure latency has no value"},
		{"bmf", `[1]`, "bencher metric format: "},
		{"libtest", "test x ... bench: fast\n", `libtest bench line 1: want "test NAME ... bench: N ns/iter (+/- N)"`},
		{"divan", "x      fastest │ slowest │ median │ mean        │ samples │ iters\n╰─ a   1 ns    │ 2 ns    │ 1 ns   │ 1 fortnight │ 1       │ 1\n", "divan table: a: mean: want a time such as 197.5 ns"},
	} {
		f, err := micro.LookupFormat(tc.format)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Parse([]byte(tc.out))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: error %v, want %q", tc.format, tc.out, err, tc.want)
		}
	}
	if _, err := micro.LookupFormat("csv"); err == nil || !strings.Contains(err.Error(), "want go, gbench, pytest, bmf, libtest, divan, criterion") {
		t.Errorf("unknown format: %v", err)
	}
}

// A format whose program writes a file or a directory ends its Usage in
// the parenthesis saying how its program runs, where Help adds how the
// run is given it.
func TestHelp(t *testing.T) {
	given := 0
	for _, f := range micro.Formats() {
		if !f.ToFile && f.Dir == "" {
			if h := f.Help("--output"); h != f.Usage {
				t.Errorf("%s: help %q, want its usage %q", f.Name, h, f.Usage)
			}
			continue
		}
		given++
		if !strings.HasSuffix(f.Usage, ")") {
			t.Errorf("%s: usage %q does not end in a parenthesis", f.Name, f.Usage)
		}
	}
	if given != 2 {
		t.Errorf("%d formats write a file or a directory, want 2 (pytest, criterion)", given)
	}
	for name, want := range map[string]string{
		"pytest":    "pytest-benchmark's JSON (--benchmark-json=FILE; give the file with --output)",
		"criterion": "criterion's estimates.json files (cargo bench; --output target/criterion)",
	} {
		f, err := micro.LookupFormat(name)
		if err != nil {
			t.Fatal(err)
		}
		if h := f.Help("--output"); h != want {
			t.Errorf("%s: help %q, want %q", name, h, want)
		}
	}
}
