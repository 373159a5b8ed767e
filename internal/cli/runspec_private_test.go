package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/load"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// A run that cannot work is a usage error where it is given, in one
// line, before anything starts: no spec to run.
func TestRunSpecRefuses(t *testing.T) {
	for name, edit := range map[string]func(*common){
		"-T and -t":       func(g *common) { g.Load.Transactions = 10 },
		"no clients":      func(g *common) { g.Load.Clients = nil },
		"a bad --io":      func(g *common) { g.Load.IO = "fast" },
		"unlimited tries": func(g *common) { g.Load.Duration, g.Load.Transactions, g.Load.MaxTries = 0, 10, 0 },
		"a bad probe":     func(g *common) { g.Probes.WaitSource = "guess" },
		"a bad window":    func(g *common) { g.Disturb.Builtins = []string{"ddl-churn@9s-10s"} },
		"a bad script":    func(g *common) { g.Workload.Scripts = []workload.ScriptArg{{Kind: "b", Arg: "nope"}} },
		"a bad rule":      func(g *common) { g.Expect = []string{"efficiency@c=16>=50%"} },
		"a bad address":   func(g *common) { g.Load.SourceAddress = "somewhere" },
	} {
		t.Run(name, func(t *testing.T) {
			probes := probeopt.DefaultOptions()
			g := common{Argv: []string{"pgscale", "run"}, Version: "test", Probes: &probes,
				Workload: workload.Spec{Scripts: []workload.ScriptArg{{Kind: "b", Arg: "select-only"}}},
				Data:     dataGiven{Init: workload.InitOptions{Scale: 1, Fillfactor: 100, PartitionMethod: "range"}},
				Load:     loadGiven{Clients: []int{1}, Settings: load.Settings{Duration: 500 * time.Millisecond, MaxTries: 1}}}
			edit(&g)
			_, err := runSpec(g, runGiven{Target: target.Existing("host=/nonexistent port=1"), Out: t.TempDir() + "/r.json"})
			if !usage.Is(err) {
				t.Errorf("%s: %v (usage error %v); want a usage error", name, err, usage.Is(err))
			} else if strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: the error is more than one line: %q", name, err)
			}
		})
	}
}
