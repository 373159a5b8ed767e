package proxy_test

import (
	"os"
	"path/filepath"
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

// proxy:examples/proxy/NAME.yaml reads from any working directory (the
// pooler-ci preset's default balancing definition); a file at that path
// under the working directory is read first.
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
