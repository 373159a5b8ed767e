package result_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/result"
)

func withDisturbance(mutate func(d *result.Disturbance)) *result.File {
	f := sample()
	lo, hi := -0.3, -0.2
	d := result.Disturbance{Name: "ddl-churn", Builtin: true, Spec: "ddl-churn@0s-1s", Script: "SELECT 1;",
		StartS: 0, EndS: 1, Sessions: 1, RanS: 1, Iterations: 40, Rate: 40,
		Effect: &result.Effect{Method: "m",
			During: &result.Phase{FromS: 0, ToS: 1, Intervals: 1, Transactions: 1, TPS: 1},
			TPS:    &result.WindowChange{Base: 100, Cand: 75, Change: -0.25, Lo: &lo, Hi: &hi, Confidence: 0.95}}}
	if mutate != nil {
		mutate(&d)
	}
	f.Steps[0].Disturbances = []result.Disturbance{d}
	return f
}

func TestDisturbanceRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := result.Write(path, withDisturbance(nil)); err != nil {
		t.Fatal(err)
	}
	g, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	d := g.Steps[0].Disturbances[0]
	if d.Iterations != 40 || d.Effect.TPS.Change != -0.25 || *d.Effect.TPS.Lo != -0.3 || d.Effect.Before != nil {
		t.Errorf("read back %+v", d)
	}
}

func TestDisturbanceRejected(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(d *result.Disturbance)
		want   string
	}{
		"no sessions":       {func(d *result.Disturbance) { d.Sessions = 0 }, "sessions"},
		"window backwards":  {func(d *result.Disturbance) { d.StartS = 2 }, "window"},
		"negative count":    {func(d *result.Disturbance) { d.Errors = -1 }, "negative"},
		"change outside":    {func(d *result.Disturbance) { d.Effect.TPS.Change = 0.1 }, "outside its interval"},
		"no effect method":  {func(d *result.Disturbance) { d.Effect.Method = "" }, "method"},
		"confidence of 95":  {func(d *result.Disturbance) { d.Effect.TPS.Confidence = 95 }, "confidence"},
		"phase of no inter": {func(d *result.Disturbance) { d.Effect.During.Intervals = 0 }, "intervals"},
	} {
		err := result.Write(filepath.Join(t.TempDir(), "r.json"), withDisturbance(tc.mutate))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Write = %v; want an error mentioning %q", name, err, tc.want)
		}
	}
}
