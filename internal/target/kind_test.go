package target_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// examples are specs of every registered kind; a kind registered without
// examples here fails TestEveryKindReadsItsOwnString.
var examples = map[target.Kind][]string{
	target.Bin: {"master=bin:/usr/local/pg-master/bin", "spaced=bin: /opt/pg 16/bin "},
	target.Settings: {"base=settings:", "big=settings:shared_buffers=2GB,wal_buffers=64MB", "pre=settings:shared_preload_libraries='pg_stat_statements,auto_explain', work_mem = 8MB",
		"rep=settings:replicas=2,work_mem=8MB"},
	target.DSN: {"kw=dsn:host=db1 port=5432 dbname=app", "uri=dsn:postgres://app@db1:6432/app?sslmode=disable"},
	target.Pooled: {"p=pgbouncer:", "p=pgbouncer:of=direct", "p=pgbouncer:pool_mode=session,of=direct, ignore_startup_parameters='extra_float_digits,search_path'",
		"p=pgbouncer:of='bin:/opt/pg/bin,replicas=2'", "p=pgbouncer:src=/src/pgbouncer@v1.25.1+/tmp/a.patch,balance=round-robin,pool_mode=session"},
	target.ProxyKind: {`b=proxy:{"command":"pgbouncer {{dir}}/b.ini","files":{"b.ini":"[databases]\n* = host={{upstream.host}}, port={{upstream.port}}\n"},"of":"direct"}`,
		`b=proxy:{"command":"pgcat {{dir}}/c.toml","ready":"5s"},of=s1,of=s2`,
		`c=proxy:{"command":"pgpool -n"},of='settings:replicas=1,work_mem=8MB'`},
	target.Src: {"master=src:/src/postgres@master", "wt=src:/src/postgres", "v2=src:/src/postgres@HEAD~3+/tmp/v2-0001.patch+/tmp/v2-0002.patch",
		"dbg=src:/src/postgres@REL_15_STABLE, configure=--enable-cassert CFLAGS=\"-O0 -g\"",
		"ld=src:/src/postgres@master,configure='LDFLAGS=-Wl,--as-needed',ext=/src/myext@main,ext=/src/other+/tmp/x.patch"},
}

// Every registered kind reads back what its String writes: the spec a
// result file records can be given again.
func TestEveryKindReadsItsOwnString(t *testing.T) {
	for _, k := range target.Kinds() {
		if len(examples[k]) == 0 {
			t.Errorf("kind %s has no examples in kind_test.go: add some", k)
		}
		for _, in := range examples[k] {
			spec, err := target.ParseSpec(in)
			if err != nil {
				t.Errorf("ParseSpec(%q): %v", in, err)
				continue
			}
			if spec.Kind != k {
				t.Errorf("ParseSpec(%q) is of kind %s, want %s", in, spec.Kind, k)
			}
			again, err := target.ParseSpec(spec.String())
			if err != nil || !reflect.DeepEqual(again, spec) {
				t.Errorf("%q: String() = %q reads as %+v, %v; want %+v", in, spec.String(), again, err, spec)
			}
			if again.String() != spec.String() {
				t.Errorf("%q: String() %q then %q", in, spec.String(), again.String())
			}
		}
	}
}

// The help, the forms flags show and the errors that list kinds name every
// registered kind.
func TestHelpNamesEveryKind(t *testing.T) {
	_, unknown := target.ParseSpec("x=docker:pg15")
	_, noKind := target.ParseSpec("x=/usr/bin")
	_, noName := target.ParseSpec("x")
	_, none := target.ParseSpecs(nil, "", 1)
	for _, k := range target.Kinds() {
		for what, text := range map[string]string{"Help": target.Help(target.Words{}), "Forms": target.Forms(), "unknown kind": unknown.Error(),
			"no kind": noKind.Error(), "no name": noName.Error(), "no target": none.Error()} {
			if !strings.Contains(text, string(k)+":") {
				t.Errorf("%s does not name kind %s: %s", what, k, text)
			}
		}
	}
	if got := target.PoolerForms(); got != "pgbouncer, pgbouncer:k=v,... or proxy:FILE.yaml" {
		t.Errorf("PoolerForms() = %q", got)
	}
	if f := target.Forms(); !strings.HasPrefix(f, "NAME=bin:DIR, NAME=settings:k=v,...[,ext=EXTPATH[@REV]...], ") || !strings.HasSuffix(f, ", NAME=pgbouncer:[of=NAME,]k=v,... or NAME=proxy:[of=NAME,]FILE.yaml") {
		t.Errorf("Forms() = %q", f)
	}
}

// A mistake in any target is a usage error before anything starts: no
// cluster starts for the first target when the second names no binaries.
func TestOpenAllPlansEveryTargetFirst(t *testing.T) {
	specs, err := target.ParseSpecs([]string{"a=settings:", "b=bin:/no/such/dir"}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	var notices []string
	// (The directory is the spec's: the words of --pg-bin are not said.)
	opt := target.ClusterOptions{Words: target.Words{PGBin: "--pg-bin"}}
	servers, err := target.OpenAll(context.Background(), specs, opt, target.Needs{Clients: 1, Connections: 1},
		func(s string) { notices = append(notices, s) })
	for _, s := range servers {
		s.Close()
	}
	if !usage.Is(err) || !strings.Contains(err.Error(), "target b: ") || !strings.Contains(err.Error(), "/no/such/dir") || strings.Contains(err.Error(), "--pg-bin") {
		t.Errorf("OpenAll: %v, want a usage error naming target b and its directory, not --pg-bin", err)
	}
	if servers != nil || len(notices) > 0 {
		t.Errorf("something started before the mistake was found: %d servers, notices %q", len(servers), notices)
	}
}

// A src: spec reads its source, configure's arguments (double quotes keep
// blanks, single quotes commas) and extensions; mistakes are one line.
func TestSrcSpec(t *testing.T) {
	for in, want := range map[string]target.SrcArg{
		`dbg=src:/src/postgres@REL_15_STABLE, configure=--enable-cassert CFLAGS="-O0 -g"`: {
			Source: build.Source{Path: "/src/postgres", Rev: "REL_15_STABLE"}, Configure: []string{"--enable-cassert", "CFLAGS=-O0 -g"}},
		"ld=src:/src/postgres@master+/tmp/a.patch,configure='LDFLAGS=-Wl,--as-needed',ext=/src/myext@main,ext=/src/other+/tmp/x.patch": {
			Source: build.Source{Path: "/src/postgres", Rev: "master", Patches: []string{"/tmp/a.patch"}}, Configure: []string{"LDFLAGS=-Wl,--as-needed"},
			Extensions: []build.Extension{{Source: build.Source{Path: "/src/myext", Rev: "main"}}, {Source: build.Source{Path: "/src/other", Patches: []string{"/tmp/x.patch"}}}}},
		"o=src:/src/postgres,ext=/src/myext@v1,make='OPTFLAGS= PG_CFLAGS=-O1',ext=/src/rs@v2,run='cargo pgrx package --out-dir \"$DESTDIR\"'": {
			Source: build.Source{Path: "/src/postgres"}, Extensions: []build.Extension{
				{Source: build.Source{Path: "/src/myext", Rev: "v1"}, Make: []string{"OPTFLAGS=", "PG_CFLAGS=-O1"}},
				{Source: build.Source{Path: "/src/rs", Rev: "v2"}, Run: `cargo pgrx package --out-dir "$DESTDIR"`}}},
	} {
		spec, err := target.ParseSpec(in)
		if err != nil || !reflect.DeepEqual(spec.Arg, want) || !spec.Ephemeral() {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", in, spec.Arg, err, want)
		}
	}
	for in, want := range map[string]string{
		"x=src:":                                 "names no source tree",
		"x=src:configure=--enable-debug":         "names no source tree",
		"x=src:/src/pg,bogus=1":                  `"bogus=1": want src:PATH`,
		`x=src:/src/pg,configure="-O2`:           "unbalanced double quote",
		"x=src:/src/pg@master+":                  "an empty patch name",
		"x=src:/src/pg,make=OPTFLAGS=":           "give it after the ext= it builds",
		"x=src:/src/pg,ext=/e,make=A=1,run=make": "make= and run= both given",
	} {
		if _, err := target.ParseSpec(in); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseSpec(%q): %v, want one line with %q", in, err, want)
		}
	}
	spec, _ := target.ParseSpec("a=settings:")
	if _, err := target.Build(context.Background(), spec, target.ClusterOptions{}, nil); !usage.Is(err) || !strings.Contains(err.Error(), "takes src: targets") {
		t.Errorf("Build of a settings: target: %v", err)
	}
}
