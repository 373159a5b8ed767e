package probeopt_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	_ "github.com/pgscale/pgscale/internal/probe" // the probes register themselves
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/probeopt"
)

// --count, a suite's count: and suite --count read one way: instructions,
// or instructions,cache; cache alone counts the instructions too; pooler
// counts the pooler alone, which the cache simulation does not go with.
func TestParseCount(t *testing.T) {
	for in, want := range map[string]probeopt.Count{
		"":                   {},
		"instructions":       {Instructions: true},
		"instructions,cache": {Instructions: true, Cache: true},
		" cache ":            {Instructions: true, Cache: true},
		"pooler":             {Instructions: true, Pooler: true},
	} {
		got, err := probeopt.ParseCount(in)
		if err != nil || got != want {
			t.Errorf("ParseCount(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if back, _ := probeopt.ParseCount(got.String()); back != got {
			t.Errorf("%q: String %q reads back as %+v", in, got.String(), back)
		}
	}
	if _, err := probeopt.ParseCount("instructions,cycles"); err == nil || !strings.Contains(err.Error(), "want instructions") {
		t.Errorf("cycles: %v", err)
	}
	if _, err := probeopt.ParseCount("pooler,cache"); err == nil || !strings.Contains(err.Error(), "give one of them") {
		t.Errorf("pooler,cache: %v", err)
	}
	var o probeopt.Options
	o.SetCount(probeopt.Count{Instructions: true, Cache: true})
	if !o.On(probeid.Instructions.Name) || !o.CacheSim || o.PoolerOnly {
		t.Errorf("SetCount: %+v", o)
	}
	o = probeopt.Options{}
	o.SetCount(probeopt.Count{Instructions: true, Pooler: true})
	if !o.On(probeid.Instructions.Name) || o.CacheSim || !o.PoolerOnly {
		t.Errorf("SetCount pooler: %+v", o)
	}
}

// suite --count fills a Count (which replaces the suite file's count:)
// with the parser run's and ab's --count use; an empty value counts
// nothing and is refused as a flag.
func TestCountInto(t *testing.T) {
	for _, in := range []string{"instructions,cache", "cycles", ""} {
		var c probeopt.Count
		fs := pflag.NewFlagSet("suite", pflag.ContinueOnError)
		fs.Var(probeopt.CountInto(&c), "count", "")
		err := fs.Parse([]string{"--count", in})
		switch {
		case in == "instructions,cache" && (err != nil || c != probeopt.Count{Instructions: true, Cache: true}):
			t.Errorf("--count %s: %+v, %v", in, c, err)
		case in != "instructions,cache" && (err == nil || !strings.Contains(err.Error(), "want instructions")):
			t.Errorf("--count %q: %+v, %v; want refused", in, c, err)
		}
	}
}

// The probes register themselves in rank order, process accounting first;
// the flags come from what they registered.
func TestRegistryAndFlags(t *testing.T) {
	names := probeopt.Names()
	if len(names) < 8 || names[0] != "process" || !slices.Contains(names, "upstreams") {
		t.Fatalf("registered probes %v", names)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o := probeopt.RegisterFlags(fs)
	if err := fs.Parse([]string{"--no-waits", "--profile", "--count", "instructions,cache", "--wait-hz", "50"}); err != nil {
		t.Fatal(err)
	}
	if o.On("waits") || !o.On(probeid.Profile.Name) || !o.On(probeid.Instructions.Name) || !o.CacheSim || o.WaitHz != 50 || !o.On("locks") {
		t.Errorf("options after the flags: %+v", *o)
	}
	if err := o.Check(); err == nil {
		t.Error("--profile with --count instructions passed the check")
	}
}
