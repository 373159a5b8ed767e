package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/rig"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// An option of the data or the workload that pgbench would refuse is a
// usage error in the words of the flag that gives it, from init and from
// a run alike.
func TestOptionWorded(t *testing.T) {
	for _, tc := range []struct {
		edit func(*dataGiven, *workload.Spec)
		want string
	}{
		{func(d *dataGiven, _ *workload.Spec) { d.Init.Scale = 0 }, "--scale must be at least 1"},
		{func(d *dataGiven, _ *workload.Spec) { d.Init.Fillfactor = 5 }, "--fillfactor must be between 10 and 100"},
		{func(d *dataGiven, _ *workload.Spec) { d.Init.Partitions = -1 }, "--partitions must be at least 0"},
		{func(d *dataGiven, _ *workload.Spec) { d.Init.PartitionMethod = "list" }, "--partition-method must be range or hash"},
		{func(d *dataGiven, _ *workload.Spec) { d.Init.Steps = "dtx" }, `-I: unrecognized initialization step "x"`},
		{func(_ *dataGiven, w *workload.Spec) { w.Protocol = "telepathy" }, `-M: unknown protocol "telepathy" (want simple, extended or prepared)`},
		{func(_ *dataGiven, w *workload.Spec) { w.Seed = "soon" }, `--random-seed: "soon" is not time, rand or an integer`},
	} {
		probes := probeopt.DefaultOptions()
		g := common{Argv: []string{"pgscale", "run"}, Version: "test", Probes: &probes,
			Workload: workload.Spec{Scripts: []workload.ScriptArg{{Kind: "b", Arg: "select-only"}}},
			Data:     dataGiven{Init: workload.InitOptions{Scale: 1, Fillfactor: 100, PartitionMethod: "range"}},
			Load:     loadGiven{Clients: []int{1}, Settings: load.Settings{Duration: 500 * time.Millisecond, MaxTries: 1}}}
		tc.edit(&g.Data, &g.Workload)
		_, err := runSpec(g, runGiven{Target: target.Existing("host=/nonexistent port=1"), Out: t.TempDir() + "/r.json"})
		if err == nil || err.Error() != tc.want || !usage.Is(err) {
			t.Errorf("run: %v (usage %v), want the usage error %q", err, usage.Is(err), tc.want)
		}
		if g.Workload.Protocol != "" || g.Workload.Seed != "" {
			continue // init reads no workload
		}
		err = initData(context.Background(), rig.InitSpec{Target: target.Existing("host=/nonexistent port=1"), Init: g.Data.Init})
		if err == nil || err.Error() != tc.want || !usage.Is(err) {
			t.Errorf("init: %v (usage %v), want the usage error %q", err, usage.Is(err), tc.want)
		}
	}
}

// A kind's properties decide what the cluster flags allow: options of
// ephemeral clusters need an ephemeral target, and counting instructions
// needs every target's server started by pgscale; the errors name the
// kinds that would do.
func TestClusterOptionsAskTheKinds(t *testing.T) {
	specs, err := target.ParseSpecs([]string{"a=dsn:host=/tmp", "b=dsn:host=/var/run/postgresql"}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	err = checkCluster(target.ClusterOptions{Tmpfs: true}, specs)
	if !usage.Is(err) || !strings.Contains(err.Error(), "(bin:, settings: or src:)") {
		t.Errorf("--tmpfs with dsn targets: %v", err)
	}
	specs, err = target.ParseSpecs([]string{"a=settings:", "b=pgbouncer:"}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkCluster(target.ClusterOptions{Tmpfs: true}, specs); err != nil {
		t.Errorf("--tmpfs with a settings target and a pooler in front of it: %v", err)
	}
	// A pooler in front of a server pgscale starts runs under Valgrind
	// too; in front of an existing server, nothing can count.
	if err := checkCluster(target.ClusterOptions{Valgrind: &target.Valgrind{}}, specs); err != nil {
		t.Errorf("--count instructions with a pooler in front of a settings target: %v", err)
	}
	specs, err = target.ParseSpecs([]string{"a=dsn:host=/tmp", "b=pgbouncer:"}, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	err = checkCluster(target.ClusterOptions{Valgrind: &target.Valgrind{}}, specs)
	if !usage.Is(err) || !strings.Contains(err.Error(), "(bin:, settings: or src:, or a pooler in front of one), not a=dsn:host=/tmp") {
		t.Errorf("--count instructions with a pooler in front of a dsn target: %v", err)
	}
}

// The target layer's errors are worded here in the flags that gave what
// they refuse, as they read before the layer stopped naming flags.
func TestTargetErrorsWorded(t *testing.T) {
	ab := func(values []string, baseline string) error {
		_, err := (&targetFlags{values: values, baseline: baseline}).parse(2)
		return err
	}
	run := func(exts []string) error {
		_, err := target.WithExtensions(target.ForRun("host=/tmp"), exts)
		return extError(err)
	}
	pooler := func(p string) error {
		_, err := target.WithPooler(target.ForRun(""), p)
		return poolerError(err)
	}
	unnamed := func(s string) error {
		_, err := target.ParseUnnamed(s)
		return specError(err, "--target")
	}
	build := func(spec string) error {
		_, err := buildSpecs([]string{spec})
		return err
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{ab([]string{"a=foo:bar", "b=settings:"}, ""), `--target "a=foo:bar": unknown kind "foo": want bin:, settings:, src:, dsn:, pgbouncer: or proxy:`},
		{ab([]string{"a=pgbouncer:of='settings:x'", "b=settings:"}, ""), `--target "a=pgbouncer:of='settings:x'": of='settings:x': --target "a.s1=settings:x": setting "x" is not name=value`},
		{ab([]string{"a=settings:"}, ""), "an A/B run needs at least 2 targets (--target NAME=SPEC, repeated); got 1"},
		{ab([]string{"a=settings:", "b=settings:"}, "zz"), `--baseline "zz" names no target (targets: a, b)`},
		{unnamed("pgbouncer:of='settings:x'"), `target "pgbouncer:of='settings:x'": of='settings:x': --target "s1=settings:x": setting "x" is not name=value`},
		{run([]string{""}), `--ext "": want EXTPATH[@REV][+PATCH...][,make=ARGS|,run=CMD]`},
		{run([]string{"ext=/tmp/e,ext=/tmp/f"}), `--ext "ext=/tmp/e,ext=/tmp/f": "ext=/tmp/f": want EXTPATH[@REV][+PATCH...][,make=ARGS|,run=CMD] (one extension per --ext)`},
		{run([]string{"/tmp/e"}), "--ext builds an extension for the ephemeral cluster's server (the installed one, or --pg-src): not with --dsn"},
		{pooler("pgbouncer:of=a"), `--pooler "pgbouncer:of=a": of= names an ab target; run's pooler fronts the ephemeral cluster or --dsn`},
		{pooler("nosuch"), `--pooler "nosuch": want pgbouncer, pgbouncer:k=v,... or proxy:FILE.yaml`},
		// build has no --pg-src or --target: its SPEC is said as given.
		{build("src:"), `build "src:": src: names no source tree: want src:PATH[@REV][+PATCH...][,configure=ARGS][,ext=EXTPATH[@REV][+PATCH...][,make=ARGS|,run=CMD]]`},
		{build("a=foo:bar"), `build "a=foo:bar": unknown kind "foo": want bin:, settings:, src:, dsn:, pgbouncer: or proxy:`},
		{build("settings:,ext="), `build "settings:,ext=": ext=: empty source: want PATH[@REV][+PATCH...]`},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("got %v\nwant %s", tc.err, tc.want)
		}
	}
	if err := run([]string{"/tmp/e"}); !usage.Is(err) {
		t.Errorf("--ext's error %v is not a usage error", err)
	}
}
