package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/store"
)

// microRun is a micro-benchmark run of base and cand started at, 5
// rounds: BenchmarkA (ns/op, allocs/op) and BenchmarkB (ns/op), cand's
// BenchmarkA time scaled by slow, every value a little off its centre.
func microRun(t testing.TB, at time.Duration, slow float64) (*micro.Run, []byte) {
	t.Helper()
	env := recorded(t, "run-c2-a.json").Environment
	run := &micro.Run{Version: micro.RunVersion, Command: "go test -bench .", Format: "go", Environment: &env,
		Started: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC).Add(at),
		Targets: []micro.Target{{Name: "base", Spec: "/src/proj@main", Commit: "aaaa"}, {Name: "cand", Spec: "/src/proj@HEAD", Commit: "bbbb"}}}
	for i := 0; i < 5; i++ {
		var round micro.Round
		for side, name := range []string{"base", "cand"} {
			jitter := 1 + 0.003*math.Sin(float64(7*i+side)+at.Hours())
			a := 1000 * jitter
			if name == "cand" {
				a *= slow
			}
			round.Runs = append(round.Runs, micro.TargetRun{Target: name, Seconds: 1, Samples: []micro.Sample{
				{Name: "BenchmarkA", Values: []micro.Value{{Unit: "ns/op", Value: a}, {Unit: "allocs/op", Value: 2}}},
				{Name: "BenchmarkB", Values: []micro.Value{{Unit: "ns/op", Value: 500 * jitter}}},
			}})
		}
		run.Rounds = append(run.Rounds, round)
	}
	raw, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	return run, raw
}

func byTarget(labels map[string]string) func(micro.Target) store.Meta {
	return func(t micro.Target) store.Meta { return store.Meta{Label: labels[t.Name]} }
}

// A micro-benchmark run is stored once per target, each benchmark's
// measure a series of its own named as a bound names it, clients 0;
// adding it again stores nothing; what reads result files refuses it.
func TestAddMicro(t *testing.T) {
	forEachBackend(t, func(t *testing.T, location string) {
		ctx := context.Background()
		s := open(t, location)
		_, raw := microRun(t, 0, 1)
		recs, err := s.AddMicro(ctx, raw, byTarget(nil))
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2 || recs[0].Target != "base" || recs[0].Label != "base" || recs[1].Label != "cand" || recs[0].Points != 3 || recs[0].Duplicate {
			t.Fatalf("recorded %+v; want base and cand, 3 points each", recs)
		}
		series, err := s.Series(ctx, store.Filter{Label: "cand"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, sr := range series {
			got = append(got, fmt.Sprintf("%s|%d|%s|%s|%d", sr.Workload, sr.Clients, sr.Measure, sr.Unit, sr.Last.N))
			if !sr.Micro() || sr.Last.Commit != "" {
				t.Errorf("series %v: micro %v, commit %q (AddMicro records the commit its caller gives)", sr.Key, sr.Micro(), sr.Last.Commit)
			}
		}
		want := "micro:proj|0|micro:BenchmarkA|ns/op|5 micro:proj|0|micro:BenchmarkA@allocs/op|allocs/op|5 micro:proj|0|micro:BenchmarkB|ns/op|5"
		if strings.Join(got, " ") != want {
			t.Errorf("series\n%s\nwant\n%s", strings.Join(got, " "), want)
		}
		again, err := s.AddMicro(ctx, raw, byTarget(nil))
		if err != nil || len(again) != 2 || !again[0].Duplicate || again[0].ResultID != recs[0].ResultID || !again[1].Duplicate {
			t.Errorf("added again: %+v, %v; want both duplicates", again, err)
		}
		if n := rows(t, s, "pgscale_results"); n != 2 {
			t.Errorf("%d stored rows, want 2", n)
		}
		if _, err := s.File(ctx, recs[0].ResultID); err == nil || !strings.Contains(err.Error(), "is a micro-benchmark run (micro:proj, label base), not a result file") {
			t.Errorf("File of a micro row: %v", err)
		}
		runs, err := s.Runs(ctx, store.Filter{})
		if err != nil || len(runs) != 2 || runs[0].Kind != store.KindMicro {
			t.Errorf("runs %+v, %v", runs, err)
		}
		if _, err := s.Baseline(ctx, "base", "", "micro:proj", runs[0].Machine); err == nil {
			t.Error("a micro-benchmark run served as a baseline of a result file")
		}
		if body, err := s.Result(ctx, recs[1].ResultID); err != nil || string(body) != string(raw) {
			t.Errorf("the row's body is not the run file: %v", err)
		}
	})
}

// A run without the machine it ran on, or with a password, is refused
// in one line, and nothing is stored.
func TestAddMicroRefuses(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir()+"/h.db")
	run, _ := microRun(t, 0, 1)
	run.Environment = nil
	raw, _ := json.Marshal(run)
	if _, err := s.AddMicro(ctx, raw, byTarget(nil)); err == nil || !strings.Contains(err.Error(), "not stored: the micro-benchmark run records no machine") {
		t.Errorf("no environment: %v", err)
	}
	run, _ = microRun(t, 0, 1)
	run.Command = "bench --dsn 'host=db password=secret'"
	raw, _ = json.Marshal(run)
	if _, err := s.AddMicro(ctx, raw, byTarget(nil)); err == nil || !strings.Contains(err.Error(), "holds an unredacted password") {
		t.Errorf("a password: %v", err)
	}
	if _, err := s.AddMicro(ctx, []byte(`{"version": 9}`), byTarget(nil)); err == nil || !strings.Contains(err.Error(), "not stored: not a micro-benchmark run file: micro-benchmark run version 9, want 1") {
		t.Errorf("another version: %v", err)
	}
	if n := rows(t, s, "pgscale_results"); n != 0 {
		t.Errorf("%d rows stored", n)
	}
}

// Twelve runs, cand's BenchmarkA 20 % slower from the seventh on: one
// change point in cand's series of BenchmarkA's time, none elsewhere, and
// a micro-benchmark bound judges it.
func TestMicroChangePoints(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir()+"/h.db")
	for i := 0; i < 12; i++ {
		slow := 1.0
		if i >= 6 {
			slow = 1.2
		}
		_, raw := microRun(t, time.Duration(i)*time.Hour, slow)
		if _, err := s.AddMicro(ctx, raw, func(t micro.Target) store.Meta {
			return store.Meta{Label: "main-" + t.Name, Commit: fmt.Sprintf("c%02d", i)}
		}); err != nil {
			t.Fatal(err)
		}
	}
	changes, _, err := s.Changes(ctx, store.Filter{}, stats.ChangePointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 {
		t.Fatalf("changes %v, want one", changes)
	}
	c := changes[0]
	if c.Series.Label != "main-cand" || c.Series.Measure != "micro:BenchmarkA" || c.Before.Commit != "c05" || c.After.Commit != "c06" || !(c.Change > 0.18 && c.Change < 0.22) {
		t.Errorf("change %+v, want +20%% in main-cand's micro:BenchmarkA between c05 and c06", c)
	}
	m := c.Comparison().Measure
	if m.Name != "micro:BenchmarkA" || m.Step != "ns/op" || m.Direction != stats.LowerIsBetter {
		t.Errorf("judged as %+v, want micro:BenchmarkA at ns/op, lower is better", m)
	}
	bs, err := micro.ParseBounds([]string{"micro:Benchmark*=+10%"})
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := micro.ResolveBounds(bs, []stats.Measure{m}, []bool{true})
	if err != nil {
		t.Fatal(err)
	}
	if a := stats.JudgeChange(c.Comparison(), resolved); a.Outcome != stats.Fail {
		t.Errorf("against micro:Benchmark*=+10%%: %s", a.Outcome)
	}
}

// A store made before micro-benchmark runs were kept (schema version 1)
// is migrated: its rows are result files.
func TestMigrateToMicro(t *testing.T) {
	forEachBackend(t, func(t *testing.T, location string) {
		ctx := context.Background()
		old, err := store.OpenVersion(ctx, location, 1)
		if err != nil {
			t.Fatal(err)
		}
		f, raw := variant(t, 0, 1000)
		if _, err := old.Add(ctx, f, raw, store.Meta{Label: "main"}); err == nil {
			t.Fatal("a version-1 store took a row with a kind") // Add names the column
		}
		if err := old.Exec(ctx, `INSERT INTO pgscale_machines (fingerprint, os, cpu_model, cpus, memory_gib, kernel) VALUES ('m', 'linux', 'x', 2, 24, '6')`); err != nil {
			t.Fatal(err)
		}
		if err := old.Exec(ctx, `INSERT INTO pgscale_results (digest, label, commit_id, started, recorded, machine, workload, complete, body)
			VALUES ('d', 'main', 'c1', '2026-12-01T08:00:00.000000000Z', '2026-12-01T08:00:00.000000000Z', 'm', 'w', TRUE, $1)`, string(raw)); err != nil {
			t.Fatal(err)
		}
		old.Close()
		s := open(t, location)
		var id int64 = 1
		if _, err := s.File(ctx, id); err != nil {
			t.Errorf("the old row is not read as a result file: %v", err)
		}
		_, mraw := microRun(t, 0, 1)
		if _, err := s.AddMicro(ctx, mraw, byTarget(nil)); err != nil {
			t.Errorf("after migrating: %v", err)
		}
	})
}
