package diagnose_test

import (
	"math"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/result"
)

const (
	pgBin  = "/usr/lib/postgresql/15/bin/postgres"
	extLib = "/var/cache/pgscale/builds/e9282b32/install/usr/lib/postgresql/15/lib/pg_rational.so"
)

// profiled is a 10 s step of 1 000 tps whose server used 2 s of CPU (200
// µs a transaction), with a perf profile of the work of n samples at 99 Hz
// split 50% the extension, 30% the server (a third of it unnamed), 15% the
// kernel, 5% libc; the probes' own backends are not in the work.
func profiled(n int64) result.Step {
	s := step(8, 1000, 1, 2, 0.5, 0, map[string]int64{"CPU": 10})
	ext, srv, kern := n/2, n*3/10, n*15/100
	libc := n - ext - srv - kern
	s.Probes.SetProfile(&result.Profile{File: "p.pb.gz", Samples: n + 7, Hz: 99, Work: n,
		Objects: []result.ProfileObject{
			{Object: extLib, Self: ext, Symbols: &result.Symbols{Source: "symbol table"}},
			{Object: pgBin, Self: srv, Unnamed: srv / 3, Symbols: &result.Symbols{Source: "dynamic symbols", BuildID: "a6ade789",
				Looked: []string{"/usr/lib/debug/.build-id/a6/ade789.debug", "/usr/lib/postgresql/15/bin/ade789.debug"}, Package: "postgresql-15", PackageVersion: "15.20-0+deb12u1"}},
			{Object: "[kernel.kallsyms]", Self: kern},
			{Object: "/usr/lib/x86_64-linux-gnu/libc.so.6", Self: libc, Symbols: &result.Symbols{Source: "debug file"}},
		},
		Functions: []result.ProfileFunc{{Function: "rational_add", Object: extLib, Self: ext, Total: ext}, {Function: "ExecScan", Object: pgBin, Self: 5, Total: ext + 40}}})
	return s
}

func TestCPUSplit(t *testing.T) {
	f := diagnose.Compute(profiled(1000))
	sp := f.Split
	if sp == nil {
		t.Fatal("no split")
	}
	if math.Abs(sp.PerTxn-200) > 1e-9 || sp.Samples != 1000 || sp.Hz != 99 || sp.Counted {
		t.Fatalf("split of %+v", sp)
	}
	want := map[string]float64{diagnose.KindExtension: 100, diagnose.KindServer: 60, diagnose.KindKernel: 30, diagnose.KindLibc: 10}
	var order []string
	for _, g := range sp.Groups {
		order = append(order, g.Name)
		if math.Abs(g.PerTxn-want[g.Name]) > 1e-9 {
			t.Errorf("%s: %.2f µs per transaction, want %.0f", g.Name, g.PerTxn, want[g.Name])
		}
		// ± 1.96 √(p(1-p)/n) of the whole.
		p := want[g.Name] / 200
		if m := 1.959964 * math.Sqrt(p*(1-p)/1000) * 200; math.Abs(g.Margin-m) > 1e-6 {
			t.Errorf("%s: margin %.3f, want %.3f", g.Name, g.Margin, m)
		}
	}
	if strings.Join(order, " ") != "extension server libc kernel" {
		t.Errorf("groups in the order %v", order)
	}
	if fn := sp.Functions[0]; fn.Name != "rational_add" || fn.Object != "pg_rational.so" || math.Abs(fn.PerTxn-100) > 1e-9 || fn.Kind != diagnose.KindExtension {
		t.Errorf("first function %+v", fn)
	}
	if fn := sp.Functions[1]; math.Abs(fn.TotalPerTxn-(540.0/1000*200)) > 1e-9 {
		t.Errorf("ExecScan with its callees: %.2f", fn.TotalPerTxn)
	}
	if len(sp.Unnamed) != 1 || sp.Unnamed[0].Object != "postgres" || math.Abs(sp.Unnamed[0].Share-0.1) > 1e-9 {
		t.Fatalf("unnamed %+v", sp.Unnamed)
	}
	for _, w := range []string{"postgres is stripped", "/usr/lib/debug/.build-id/a6/ade789.debug", "postgresql-15-dbgsym 15.20-0+deb12u1"} {
		if !strings.Contains(sp.Unnamed[0].Reason, w) {
			t.Errorf("reason %q lacks %q", sp.Unnamed[0].Reason, w)
		}
	}
	// A server built from source names them too: a remedy the renderers
	// word.
	if sp.Unnamed[0].Also != diagnose.SourceBuild {
		t.Errorf("unnamed: also %d, want a source build", sp.Unnamed[0].Also)
	}
	if sp.Caution != "" {
		t.Errorf("1 000 samples: caution %q", sp.Caution)
	}
	// Said once per file however many steps hold it.
	if u := diagnose.UnnamedOf([]diagnose.Figures{f, f}); len(u) != 1 {
		t.Errorf("UnnamedOf: %+v", u)
	}
}

// Too few samples at perf's rate: the split says so, with the rate and
// the step length that would give enough; none at all, with what the
// server's CPU would have given (issue 46, finding 1: "profile: 0 samples").
func TestCPUSplitFewSamples(t *testing.T) {
	sp := diagnose.Compute(profiled(40)).Split
	for _, w := range []string{"too few samples", "40 at 99 Hz in 10.0 s", "-T 100", "perf took 40 samples where the server's 2.00 s of CPU would give 198 at 99 Hz (20%)"} {
		if !strings.Contains(sp.Caution, w) {
			t.Errorf("caution %q lacks %q", sp.Caution, w)
		}
	}
	s := profiled(0)
	pr := s.Probes.Profile()
	pr.Work, pr.Objects, pr.Functions = 0, nil, nil
	sp = diagnose.Compute(s).Split
	if sp == nil || len(sp.Groups) != 0 || sp.Caution != "perf took no sample of the server's work at 99 Hz in 10.0 s, where the server's 2.00 s of CPU would give about 198" {
		t.Errorf("no sample: %+v", sp)
	}
	// A file written before profiles kept their objects has no split.
	s = profiled(10)
	pr = s.Probes.Profile()
	pr.Hz, pr.Objects = 0, nil
	if sp := diagnose.Compute(s).Split; sp != nil {
		t.Errorf("an old profile split: %+v", sp)
	}
}

func TestObjectKinds(t *testing.T) {
	for obj, want := range map[string]string{
		"/usr/lib/postgresql/15/lib/pg_stat_statements.so": diagnose.KindExtension,
		"/home/u/pg/inst/lib/postgresql/vector.so":         diagnose.KindExtension,
		"/usr/lib/x86_64-linux-gnu/libm.so.6":              diagnose.KindLibc,
		"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2":   diagnose.KindLibc,
		"/usr/lib/x86_64-linux-gnu/libcrypto.so.3":         diagnose.KindOther,
		"[vdso]": diagnose.KindKernel,
		"/var/cache/pgscale/builds/k/install/usr/lib/postgresql/15/bin/postgres": diagnose.KindServer,
	} {
		s := profiled(100)
		pr := s.Probes.Profile()
		pr.Objects = append(pr.Objects, result.ProfileObject{Object: obj, Self: 1})
		var got string
		for _, o := range diagnose.Compute(s).Split.Objects {
			if o.Name == objectBase(obj) && (o.Kind == want || got == "") {
				got = o.Kind
			}
		}
		if got != want {
			t.Errorf("%s: kind %q, want %q", obj, got, want)
		}
	}
}

func objectBase(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}
