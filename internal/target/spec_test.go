package target_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/target"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want target.Spec
	}{
		{"master=bin:/usr/local/pg-master/bin", target.Spec{Name: "master", Kind: target.Bin, Arg: target.BinArg{Dir: "/usr/local/pg-master/bin"}}},
		{"base=settings:", target.Spec{Name: "base", Kind: target.Settings, Arg: target.SettingsArg{}}},
		{"big=settings:shared_buffers=2GB,wal_buffers=64MB", target.Spec{Name: "big", Kind: target.Settings,
			Arg: target.SettingsArg{Settings: []target.Setting{{Name: "shared_buffers", Value: "2GB"}, {Name: "wal_buffers", Value: "64MB"}}}}},
		{"pre=settings:shared_preload_libraries='pg_stat_statements,auto_explain', work_mem = 8MB", target.Spec{Name: "pre", Kind: target.Settings,
			Arg: target.SettingsArg{Settings: []target.Setting{{Name: "shared_preload_libraries", Value: "pg_stat_statements,auto_explain"}, {Name: "work_mem", Value: "8MB"}}}}},
		{"x=settings:work_mem=8MB,ext=/src/myext@slow+/tmp/a.patch,make=OPTFLAGS=", target.Spec{Name: "x", Kind: target.Settings,
			Arg: target.SettingsArg{Settings: []target.Setting{{Name: "work_mem", Value: "8MB"}},
				Extensions: []build.Extension{{Source: build.Source{Path: "/src/myext", Rev: "slow", Patches: []string{"/tmp/a.patch"}}, Make: []string{"OPTFLAGS="}}}}}},
		{"pooled=dsn:postgres://app:s3cret@db1:6432/app", target.Spec{Name: "pooled", Kind: target.DSN, Arg: target.DSNArg{DSN: "postgres://app:s3cret@db1:6432/app"}}},
		{"kw=dsn:host=db1 port=5432 dbname=app", target.Spec{Name: "kw", Kind: target.DSN, Arg: target.DSNArg{DSN: "host=db1 port=5432 dbname=app"}}},
	} {
		got, err := target.ParseSpec(tc.in)
		if err != nil {
			t.Errorf("ParseSpec(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSpec(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestParseSpecErrors(t *testing.T) {
	for _, in := range []string{
		"master",                     // no =
		"master=/usr/bin",            // no kind
		"master=docker:pg15",         // unknown kind
		"=bin:/x",                    // no name
		"bad name=bin:/x",            // space in name
		"../x=bin:/x",                // path in name
		"m=bin:",                     // no dir
		"d=dsn:",                     // no connection string
		"s=settings:a='b,c",          // unbalanced quote
		"s=settings:novalue",         // not k=v
		"s=settings:,make=OPTFLAGS=", // make= before any ext=
		"p=dsn:postgres://u:pw@h/d",  // fine, but checked below for redaction
	} {
		_, err := target.ParseSpec(in)
		if strings.Contains(in, "pw@") {
			if err != nil {
				t.Errorf("ParseSpec(%q): %v", in, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("ParseSpec(%q) accepted", in)
		}
	}
	_, err := target.ParseSpec("p=docker:postgres://u:hunter2@h/d")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v shows the password or is missing", err)
	}
}

func TestTargetSpecStringRedacts(t *testing.T) {
	s, err := target.ParseSpec("pooled=dsn:postgres://app:hunter2@db1:6432/app")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); strings.Contains(got, "hunter2") || !strings.HasPrefix(got, "pooled=dsn:postgres://app:") {
		t.Errorf("String() = %q", got)
	}
}

func TestParseSpecsBaseline(t *testing.T) {
	specs := []string{"a=settings:", "b=settings:x=1", "c=settings:y=2"}
	got, err := target.ParseSpecs(specs, "", 2)
	if err != nil || got[0].Name != "a" {
		t.Fatalf("default baseline: %v, %v", got, err)
	}
	got, err = target.ParseSpecs(specs, "c", 2)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "c,a,b" {
		t.Errorf("--baseline c: order %v, want c,a,b", names)
	}
	for _, bad := range []struct {
		specs    []string
		baseline string
	}{
		{specs[:1], ""}, // one target
		{[]string{"a=settings:", "a=settings:x=1"}, ""}, // same name twice
		{specs, "nosuch"}, // unknown baseline
	} {
		if _, err := target.ParseSpecs(bad.specs, bad.baseline, 2); err == nil {
			t.Errorf("ParseSpecs(%v, %q) accepted", bad.specs, bad.baseline)
		}
	}
}

// A target without a name reads as the named one does, and Named gives
// it the name it would have had, its own servers renamed after it and
// fronted: as ParseSpecs would have read NAME=SPEC.
func TestParseUnnamedThenNamed(t *testing.T) {
	for _, spec := range []string{
		"settings:work_mem=8MB,ext=/src/myext@slow",
		"src:/src/pg@v1",
		"pgbouncer:pool_mode=session,of='settings:work_mem=8MB'",
		`proxy:{"command":"pgpool -n"},of='settings:replicas=1,work_mem=8MB'`,
	} {
		got, err := target.ParseUnnamed(spec)
		if err != nil {
			t.Errorf("ParseUnnamed(%q): %v", spec, err)
			continue
		}
		if got.Name != "" {
			t.Errorf("ParseUnnamed(%q) is named %q", spec, got.Name)
		}
		want, err := target.ParseSpecs([]string{"abc1234=" + spec}, "", 1)
		if err != nil {
			t.Fatal(err)
		}
		if named := got.Named("abc1234"); !reflect.DeepEqual(named, want[0]) {
			t.Errorf("ParseUnnamed(%q).Named = %+v, want %+v", spec, named, want[0])
		}
	}
	for _, bad := range []string{"", "src", "docker:pg15", "src:"} {
		if _, err := target.ParseUnnamed(bad); err == nil {
			t.Errorf("ParseUnnamed(%q): no error", bad)
		}
	}
}
