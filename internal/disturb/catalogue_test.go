package disturb_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/script"
)

func TestBuiltinDisturbancesParse(t *testing.T) {
	ds := disturb.Builtins()
	var names []string
	for _, d := range ds {
		names = append(names, d.Name)
		if d.Stresses == "" {
			t.Errorf("%s does not say what it stresses", d.Name)
		}
		s, err := script.Parse(d.Name, d.Script)
		if err != nil {
			t.Errorf("%s: %v", d.Name, err)
			continue
		}
		if len(s.Commands) == 0 {
			t.Errorf("%s: empty script", d.Name)
		}
	}
	if got := strings.Join(names, " "); got != "analyze checkpoint ddl-churn long-txn vacuum" {
		t.Errorf("built-in disturbances %q", got)
	}
	if _, err := disturb.Find("ddl"); err == nil || !strings.Contains(err.Error(), "have analyze, checkpoint, ddl-churn, long-txn, vacuum") {
		t.Errorf("FindDisturbance(ddl) error %v; want the list of names", err)
	}
}

func TestDisturbanceArgs(t *testing.T) {
	find := func(name string) disturb.Builtin {
		d, err := disturb.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	ctx := context.Background()
	// A period becomes microseconds for \sleep :every_us us.
	for arg, want := range map[string]string{"": "5000000", "10s": "10000000", "500ms": "500000", "2.5": "2500000"} {
		vars, err := find("checkpoint").Vars(ctx, nil, arg)
		if err != nil || vars["every_us"] != want {
			t.Errorf("checkpoint=%s: vars %v, %v; want every_us %s", arg, vars, err, want)
		}
	}
	for name, arg := range map[string]string{
		"checkpoint": "soon", "ddl-churn": "x", "long-txn": "1", "vacuum": "t; DROP TABLE x", "analyze": "a b",
	} {
		if err := find(name).CheckArg(arg); err == nil {
			t.Errorf("%s=%s accepted", name, arg)
		}
	}
	for _, arg := range []string{"pgbench_accounts", `public."Big Table"`, "s.t"} {
		vars, err := find("vacuum").Vars(ctx, nil, arg)
		if err != nil || vars["table"] != arg {
			t.Errorf("vacuum=%s: vars %v, %v", arg, vars, err)
		}
	}
}
