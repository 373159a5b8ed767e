package proxy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	proxyexamples "github.com/pgscale/pgscale/examples/proxy"
	"github.com/pgscale/pgscale/internal/target"
)

// Every example beside this file is carried, byte for byte, under the
// path the docs write; any other path is not.
func TestEveryExampleIsCarried(t *testing.T) {
	paths, _ := filepath.Glob("*.yaml")
	if len(paths) < 5 {
		t.Fatalf("examples %v", paths)
	}
	for _, p := range paths {
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"examples/proxy/" + p, "./examples/proxy/" + p} {
			if got, ok := proxyexamples.Read(name); !ok || string(got) != string(want) {
				t.Errorf("%s: carried %v, %d bytes of %d", name, ok, len(got), len(want))
			}
		}
	}
	for _, name := range []string{"pgbouncer.yaml", "proxy/pgbouncer.yaml", "/examples/proxy/pgbouncer.yaml", "examples/proxy/nope.yaml", "examples/proxy/embed.go"} {
		if _, ok := proxyexamples.Read(name); ok {
			t.Errorf("%s is carried", name)
		}
	}
}

// proxy:examples/proxy/NAME.yaml reads from any working directory (as the
// docs write it); a file at that path under the working directory is read
// first.
func TestProxyExampleFromAnyDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	specs, err := target.ParseSpecs([]string{"p=proxy:examples/proxy/pgbouncer-balanced.yaml,of='settings:replicas=1'"}, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if a := specs[0].Arg.(target.ProxyArg); !a.Def.ReadOnly || a.File != "examples/proxy/pgbouncer-balanced.yaml" {
		t.Errorf("the carried definition: read_only %v, file %q", a.Def.ReadOnly, a.File)
	}
	if err := os.MkdirAll(filepath.Join(dir, "examples", "proxy"), 0o755); err != nil {
		t.Fatal(err)
	}
	own := "command: mybouncer {{dir}}/x.ini\n"
	if err := os.WriteFile(filepath.Join(dir, "examples", "proxy", "pgbouncer-balanced.yaml"), []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	specs, err = target.ParseSpecs([]string{"p=proxy:examples/proxy/pgbouncer-balanced.yaml,of='settings:'"}, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if a := specs[0].Arg.(target.ProxyArg); a.Def.ReadOnly || a.Def.Command != "mybouncer {{dir}}/x.ini" {
		t.Errorf("the working directory's file is not read first: %+v", a.Def)
	}
	if _, err := target.ParseSpecs([]string{"p=proxy:examples/proxy/nope.yaml"}, "", 1); err == nil {
		t.Errorf("a definition that is neither a file nor carried was read")
	}
}

// Every example is a definition pgscale reads; the sharding one says to
// pgscale (shards:) what its pgdog.toml says to PgDog (sharded_tables).
func TestEveryExampleReads(t *testing.T) {
	paths, _ := filepath.Glob("*.yaml")
	for _, p := range paths {
		specs, err := target.ParseSpecs([]string{"s1=settings:", "s2=settings:", "p=proxy:" + p}, "", 2)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		a := specs[2].Arg.(target.ProxyArg)
		if p != "pgdog-sharded.yaml" {
			if len(a.Def.Shards) != 0 {
				t.Errorf("%s shards %v", p, a.Def.Shards)
			}
			continue
		}
		if len(a.Def.Shards) != 2 || len(specs[2].Of) != 2 {
			t.Fatalf("%s: shards %v over %v", p, a.Def.Shards, specs[2].Of)
		}
		toml := a.Def.Files[0].Template
		for _, sh := range a.Def.Shards {
			if !strings.Contains(toml, "name = \""+sh.Table+"\"\ncolumn = \""+sh.Column+"\"") {
				t.Errorf("%s: shards: %s by %s is not in its sharded_tables", p, sh.Table, sh.Column)
			}
		}
	}
}
