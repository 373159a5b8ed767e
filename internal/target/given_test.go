package target_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/target"
)

// A suite file's target map hands the proxy kind its definition as
// written (YAML), or the name of the file beside the suite: the kind's own
// file reads it, and the target writes back as --target takes it.
func TestParseGiven(t *testing.T) {
	dir := t.TempDir()
	def := "command: pgbouncer {{dir}}/p.ini\nfiles:\n  p.ini: |\n    [databases]\n    * = host={{upstream.host}}\nof: a\nready: 5s\n"
	if err := os.WriteFile(filepath.Join(dir, "pool.yaml"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	specs, err := target.ParseGiven([]target.Given{
		{Spec: "a=settings:"},
		{Name: "b", Kind: target.ProxyKind, Def: []byte(def), Dir: dir},
		{Name: "c", Kind: target.ProxyKind, Def: []byte("pool.yaml\n"), Dir: dir},
	}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 3 || specs[1].Name != "b" || len(specs[1].Of) != 1 || specs[1].Of[0] != "a" || specs[1].Front[0].Name != "a" {
		t.Fatalf("specs %+v", specs)
	}
	b := specs[1].String()
	if !strings.HasPrefix(b, `b=proxy:{"command":"pgbouncer {{dir}}/p.ini"`) || !strings.Contains(b, `"of":"a"`) {
		t.Errorf("the definition written back: %s", b)
	}
	if again, err := target.ParseSpec(b); err != nil || again.String() != b {
		t.Errorf("written back, it reads as %s (%v), not itself", again.String(), err)
	}
	if c := specs[2].Arg.(target.ProxyArg); c.File != filepath.Join(dir, "pool.yaml") || c.Def.Ready.Seconds() != 5 {
		t.Errorf("the file beside the suite: %+v", c)
	}
	for _, bad := range []struct {
		g    target.Given
		want string
	}{
		{target.Given{Name: "d", Kind: target.ProxyKind, Def: []byte("command: [\n")}, "target d: the proxy definition:"},
		{target.Given{Name: "d", Kind: target.ProxyKind, Def: []byte("files: {}\n")}, "command: the program's command line is missing"},
		{target.Given{Name: "d", Kind: "settings", Def: []byte("work_mem: 8MB\n")}, "a settings: target is given by its spec"},
		{target.Given{Name: "d d", Kind: target.ProxyKind, Def: []byte(def)}, "target name"},
	} {
		_, err := target.ParseGiven([]target.Given{{Spec: "a=settings:"}, bad.g}, "", 1)
		if err == nil || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line with %q", bad.g, err, bad.want)
		}
	}
}
