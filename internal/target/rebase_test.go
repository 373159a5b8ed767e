package target_test

import (
	"testing"

	"github.com/pgscale/pgscale/internal/target"
)

// A suite file's target specs take their relative paths from the suite
// file's directory: bin: and proxy: files, src: trees and patches, ext=
// trees and patches; absolute and home paths, templates, inline
// definitions and kinds without paths stay as they are.
func TestRebaseSpec(t *testing.T) {
	for in, want := range map[string]string{
		"a=bin:build/bin":                                                    "a=bin:/s/build/bin",
		"a=bin:/opt/pg/bin,replicas=1":                                       "a=bin:/opt/pg/bin,replicas=1",
		"p=proxy:pgb.yaml":                                                   "p=proxy:/s/pgb.yaml",
		"p=proxy:of=a,pgb.yaml":                                              "p=proxy:of=a,/s/pgb.yaml",
		"p=proxy:{\"command\":\"x\"}":                                        "p=proxy:{\"command\":\"x\"}",
		"m=src:pg@master+fix.patch,configure=--enable-debug":                 "m=src:/s/pg@master+/s/fix.patch,configure=--enable-debug",
		"m=src:~/pg@v1,ext=ext@slow+p1.patch,make=OPTFLAGS=":                 "m=src:~/pg@v1,ext=/s/ext@slow+/s/p1.patch,make=OPTFLAGS=",
		"e=settings:work_mem=8MB,ext=knn@base,make=OPTFLAGS=":                "e=settings:work_mem=8MB,ext=/s/knn@base,make=OPTFLAGS=",
		"e=settings:ext='my,ext@v1'":                                         "e=settings:ext='/s/my,ext@v1'",
		"b=pgbouncer:src=pgbouncer@base+fix.patch,balance=round-robin,of=s1": "b=pgbouncer:src=/s/pgbouncer@base+/s/fix.patch,balance=round-robin,of=s1",
		"b=pgbouncer:pool_mode=session,src=/abs/pgb@v1":                      "b=pgbouncer:pool_mode=session,src=/abs/pgb@v1",
		"b={{base}}":                "b={{base}}",
		"d=dsn:host=/tmp port=5432": "d=dsn:host=/tmp port=5432",
		"s=settings:":               "s=settings:",
	} {
		if got := target.RebaseSpec(in, "/s"); got != want {
			t.Errorf("RebaseSpec(%q) = %q, want %q", in, got, want)
		}
	}
}
