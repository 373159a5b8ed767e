package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/store"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/target/targettest"
	"github.com/pgscale/pgscale/internal/testenv"
	"github.com/pgscale/pgscale/internal/trend"
)

// cluster is the package's ephemeral PostgreSQL; every test runs once on
// SQLite and once on a database of its own there.
var cluster *target.Cluster

func TestMain(m *testing.M) {
	if os.Getenv(writerEnv) != "" {
		os.Exit(m.Run()) // a writer process of TestConcurrentWriters
	}
	os.Exit(targettest.Run(m, target.Options{}, func(c *target.Cluster) { cluster = c }))
}

// forEachBackend runs f on a new SQLite store and a new PostgreSQL one;
// the PostgreSQL one in the full suite (a database each, about a second
// under load): -short's PostgreSQL store is TestURLLocation's.
func forEachBackend(t *testing.T, f func(t *testing.T, location string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, filepath.Join(t.TempDir(), "sub", "history.db")) })
	t.Run("postgres", func(t *testing.T) {
		testenv.Slow(t)
		f(t, newDatabase(t))
	})
}

var databases atomic.Int64

// newDatabase creates an empty database on the cluster for one test and
// returns its connection string.
func newDatabase(t *testing.T) string {
	t.Helper()
	admin, err := sql.Open("pgx", cluster.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("store_%d", databases.Add(1))
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", cluster.ConnString("postgres"))
		if err == nil {
			admin.Exec("DROP DATABASE " + name + " WITH (FORCE)")
			admin.Close()
		}
	})
	return cluster.ConnString(name)
}

// testMeasures are the measures the tests index: the four every step
// has, so that the counts below do not move as compare learns new
// measures (TestDefaultMeasures covers those).
func testMeasures() []compare.MeasureDef {
	var out []compare.MeasureDef
	for _, m := range store.DefaultMeasures() {
		switch m.Name {
		case "tps", "p50", "p99", "client-cpu/txn":
			out = append(out, m)
		}
	}
	return out
}

func open(t *testing.T, location string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), location, testMeasures()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// recorded reads one of the result files recorded on this machine
// (pgscale run -c 2 -T 2).
func recorded(t testing.TB, name string) *result.File {
	t.Helper()
	f, err := result.Read(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// variant returns a recorded file started later by at, its one step's
// tps, p50 and p99 set from tps, and its JSON.
func variant(t testing.TB, at time.Duration, tps float64) (*result.File, []byte) {
	t.Helper()
	f := recorded(t, "run-c2-a.json")
	f.Started = f.Started.Add(at)
	f.Finished = f.Finished.Add(at)
	s := &f.Steps[0].Summary
	s.TPS = tps
	s.Latency.P50Ms = 2 / tps * 1000
	s.Latency.P99Ms = 4 / tps * 1000
	return f, encode(t, f)
}

func encode(t testing.TB, f *result.File) []byte {
	t.Helper()
	raw, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func add(t *testing.T, s *store.Store, f *result.File, raw []byte, meta store.Meta) store.Recorded {
	t.Helper()
	rec, err := s.Add(context.Background(), f, raw, meta)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func rows(t *testing.T, s *store.Store, table string) int {
	t.Helper()
	n, err := s.Rows(context.Background(), table)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAddAndRead(t *testing.T) {
	forEachBackend(t, func(t *testing.T, location string) {
		ctx := context.Background()
		s := open(t, location)
		// Recorded out of time order: points come back in time order.
		tps := []float64{1000, 1010, 990, 1005}
		order := []int{2, 0, 3, 1}
		raws := map[int64][]byte{}
		for _, i := range order {
			f, raw := variant(t, time.Duration(i)*time.Hour, tps[i])
			rec := add(t, s, f, raw, store.Meta{Label: "main", Commit: fmt.Sprintf("c%d", i)})
			if rec.Duplicate || rec.Points != 4 || rec.Machine.Fingerprint == "" {
				t.Fatalf("recorded %+v, want 4 new points", rec)
			}
			raws[rec.ResultID] = raw
		}
		// The real files, under another label: tps, p50, p99, cpu/txn each.
		for _, name := range []string{"run-c2-a.json", "run-c2-b.json"} {
			raw, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			add(t, s, nil, raw, store.Meta{Label: "real"})
		}

		all, err := s.Series(ctx, store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 8 {
			t.Fatalf("%d series, want 8 (2 labels × 4 measures): %v", len(all), all)
		}
		// Measures by importance within a label and client count:
		// throughput and latency first, not alphabetically.
		var measures []string
		for _, sr := range all[:4] {
			measures = append(measures, sr.Measure)
		}
		if got := strings.Join(measures, " "); got != "tps p50 p99 client-cpu/txn" {
			t.Errorf("measures listed as %s, want tps p50 p99 client-cpu/txn", got)
		}
		hs, err := s.Export(ctx, store.Filter{Label: "main"})
		if err != nil || len(hs) != 4 || hs[0].Measure != "tps" || hs[3].Measure != "client-cpu/txn" {
			t.Errorf("export of main: %d series (%v), tps first and client-cpu/txn last wanted", len(hs), err)
		}
		series, err := s.Series(ctx, store.Filter{Label: "main", Measure: "tps"})
		if err != nil {
			t.Fatal(err)
		}
		if len(series) != 1 {
			t.Fatalf("series %v, want one", series)
		}
		sr := series[0]
		wantKey := trend.Key{Workload: "select-only -s 1 -M prepared", Label: "main", Clients: 2, Measure: "tps", Machine: sr.Machine}
		if sr.Key != wantKey || sr.Unit != "txn/s" || !sr.HigherIsBetter || sr.Count != 4 {
			t.Errorf("series %+v, want key %v, 4 points", sr, wantKey)
		}
		if sr.Last.Value != 1005 || sr.Last.Commit != "c3" || sr.Last.Name() != "c3" {
			t.Errorf("last point %+v, want 1005 from c3", sr.Last)
		}
		pts, err := s.Points(ctx, sr.ID)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range pts {
			if p.Value != tps[i] || p.Commit != fmt.Sprintf("c%d", i) || p.N != 1 || !math.IsNaN(p.Lo) || !math.IsNaN(p.Hi) {
				t.Errorf("point %d: %+v, want %v from c%d, one round, no interval", i, p, tps[i], i)
			}
			if i > 0 && !p.Time.After(pts[i-1].Time) {
				t.Errorf("point %d at %v is not after %v", i, p.Time, pts[i-1].Time)
			}
			// The file comes back byte for byte.
			body, err := s.Result(ctx, p.ResultID)
			if err != nil || string(body) != string(raws[p.ResultID]) {
				t.Errorf("result %d: %d bytes back (%v), %d stored", p.ResultID, len(body), err, len(raws[p.ResultID]))
			}
		}

		// Filters.
		for _, c := range []struct {
			f    store.Filter
			want int
		}{
			{store.Filter{Measure: "p99"}, 2},
			{store.Filter{Label: "real"}, 4},
			{store.Filter{Clients: 2, Machine: sr.Machine}, 8},
			{store.Filter{Clients: 4}, 0},
			{store.Filter{Workload: "tpcb-like"}, 0},
			{store.Filter{Machine: "000000000000"}, 0},
		} {
			got, err := s.Series(ctx, c.f)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != c.want {
				t.Errorf("filter %+v: %d series, want %d", c.f, len(got), c.want)
			}
		}
		hs, err = s.Export(ctx, store.Filter{Label: "real", Measure: "client-cpu/txn"})
		if err != nil {
			t.Fatal(err)
		}
		if len(hs) != 1 || len(hs[0].Points) != 2 || hs[0].Unit != "µs" || hs[0].HigherIsBetter || hs[0].Points[0].Label != "real" {
			t.Errorf("export %+v, want one lower-is-better series of 2 points", hs)
		}
		if _, err := s.Points(ctx, 999999); err == nil {
			t.Error("points of a series that does not exist: no error")
		}

		// The same bytes again: nothing new.
		f, raw := variant(t, 0, tps[0])
		rec := add(t, s, f, raw, store.Meta{Label: "other"})
		if !rec.Duplicate || rec.Points != 0 {
			t.Errorf("second add of the same file: %+v", rec)
		}
		if n := rows(t, s, "pgscale_results"); n != 6 {
			t.Errorf("%d results stored, want 6", n)
		}
	})
}

func TestABRounds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, location string) {
		s := open(t, location)
		for _, rounds := range []int{3, 8} {
			f := abFile(t, rounds)
			rec := add(t, s, f, nil, store.Meta{Commit: fmt.Sprint("r", rounds)})
			if rec.Points != 4 {
				t.Fatalf("%d rounds: %d points, want 4 (one per measure)", rounds, rec.Points)
			}
		}
		series, err := s.Series(context.Background(), store.Filter{Measure: "tps"})
		if err != nil {
			t.Fatal(err)
		}
		// Label defaults to the A/B target's name.
		if len(series) != 1 || series[0].Label != "base" {
			t.Fatalf("series %+v, want one labelled base", series)
		}
		pts, err := s.Points(context.Background(), series[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		// Round r has tps 1000 + 10·r: the median is the middle round.
		if p := pts[0]; p.N != 3 || p.Value != 1020 || !math.IsNaN(p.Lo) {
			t.Errorf("3 rounds: %+v, want median 1020 and no interval (too few rounds)", p)
		}
		if p := pts[1]; p.N != 8 || p.Value != 1045 || !(p.Lo < p.Value && p.Value < p.Hi) || p.Lo < 1010 || p.Hi > 1080 {
			t.Errorf("8 rounds: %+v, want median 1045 inside an interval within the rounds", p)
		}
	})
}

// abFile makes an A/B file of the baseline target from a recorded run:
// rounds steps at 2 clients, round r with tps 1000 + 10·r.
func abFile(t *testing.T, rounds int) *result.File {
	f := recorded(t, "run-c2-a.json")
	f.Started = f.Started.Add(time.Duration(rounds) * time.Hour)
	f.Target.Name = "base"
	f.AB = &result.AB{Run: fmt.Sprint("ab-", rounds), Baseline: "base", Rounds: rounds, RoundsDone: rounds,
		Targets: []result.ABTarget{{Name: "base", Spec: "bin:/usr/lib/postgresql/15/bin", File: "base.json"},
			{Name: "cand", Spec: "settings:work_mem=64MB", File: "cand.json"}}}
	step := f.Steps[0]
	f.Steps = nil
	for r := 1; r <= rounds; r++ {
		st := step
		st.Round = r
		st.Summary.TPS = 1000 + 10*float64(r)
		f.Steps = append(f.Steps, st)
		f.AB.Order = append(f.AB.Order, []string{"base", "cand"})
	}
	return f
}

func TestAddRefuses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, location string) {
		ctx := context.Background()
		s := open(t, location)
		good, goodRaw := variant(t, 0, 1000)
		cases := []struct {
			name string
			f    func() (*result.File, []byte)
			want string
		}{
			{"not JSON", func() (*result.File, []byte) { return nil, []byte("{tps: 5") }, "not a valid pgscale result file"},
			{"schema", func() (*result.File, []byte) {
				return nil, []byte(strings.Replace(string(goodRaw), `"pgscale.result"`, `"other"`, 1))
			}, "not a valid pgscale result file"},
			{"rules", func() (*result.File, []byte) {
				f, _ := variant(t, 0, 1000)
				f.Steps[0].Summary.Transactions++
				return f, nil
			}, "intervals hold"},
			{"password in the command", func() (*result.File, []byte) {
				f, _ := variant(t, 0, 1000)
				f.Command = append(f.Command, "--dsn", "postgres://bench:hunter2@db/bench")
				return f, nil
			}, "unredacted password"},
			{"password in a setting", func() (*result.File, []byte) {
				f, _ := variant(t, 0, 1000)
				f.Target.Settings["primary_conninfo"] = "host=primary user=repl password=hunter2"
				return f, nil
			}, "target.settings.primary_conninfo holds an unredacted password"},
			{"bytes of another file", func() (*result.File, []byte) {
				_, other := variant(t, time.Hour, 1000)
				return good, other
			}, "differ"},
			{"nothing", func() (*result.File, []byte) { return nil, nil }, "no result file"},
		}
		for _, c := range cases {
			f, raw := c.f()
			_, err := s.Add(ctx, f, raw, store.Meta{Label: "main"})
			if err == nil {
				t.Errorf("%s: stored", c.name)
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || strings.Contains(msg, "hunter2") {
				t.Errorf("%s: error %q, want one line with %q and no password", c.name, msg, c.want)
			}
		}
		// A failure half-way through (two measures of one name make the
		// second point collide with the first) stores nothing at all.
		tps := store.DefaultMeasures()[0]
		dup, err := store.Open(ctx, location, tps, tps)
		if err != nil {
			t.Fatal(err)
		}
		defer dup.Close()
		if _, err := dup.Add(ctx, good, goodRaw, store.Meta{}); err == nil {
			t.Error("two points for one series and result: stored")
		}
		for _, table := range []string{"pgscale_results", "pgscale_series", "pgscale_points", "pgscale_machines"} {
			if n := rows(t, s, table); n != 0 {
				t.Errorf("%d rows in %s after refusals", n, table)
			}
		}
	})
}

func TestSchemaVersions(t *testing.T) {
	if store.SchemaVersion != store.LastMigration {
		t.Fatalf("SchemaVersion %d, but the last migration is to %d", store.SchemaVersion, store.LastMigration)
	}
	forEachBackend(t, func(t *testing.T, location string) {
		ctx := context.Background()
		s := open(t, location)
		if v, err := s.StoredVersion(ctx); err != nil || v != store.SchemaVersion {
			t.Fatalf("new store at version %d (%v), want %d", v, err, store.SchemaVersion)
		}
		f, raw := variant(t, 0, 1000)
		add(t, s, f, raw, store.Meta{Label: "main", Commit: "old"})
		s.Close()

		// Opening again migrates nothing and keeps everything.
		s = open(t, location)
		if n := rows(t, s, "pgscale_points"); n != 4 {
			t.Fatalf("%d points after reopening, want 4", n)
		}
		s.Close()

		// A newer pgscale migrates this store, keeping its data...
		next, err := store.OpenNext(ctx, location, `ALTER TABLE pgscale_results ADD COLUMN note TEXT NOT NULL DEFAULT ''`)
		if err != nil {
			t.Fatalf("migrating to the next version: %v", err)
		}
		if v, _ := next.StoredVersion(ctx); v != store.SchemaVersion+1 {
			t.Errorf("after migration at version %d, want %d", v, store.SchemaVersion+1)
		}
		series, err := next.Series(ctx, store.Filter{Measure: "tps"})
		if err != nil || len(series) != 1 || series[0].Last.Commit != "old" {
			t.Errorf("after migration: %+v, %v", series, err)
		}
		next.Close()

		// ...and this one then refuses the store it cannot read.
		_, err = store.Open(ctx, location)
		want := fmt.Sprintf("schema is version %d, this pgscale knows up to %d; use a newer pgscale", store.SchemaVersion+1, store.SchemaVersion)
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, store.ErrNewerSchema) {
			t.Errorf("opening a newer store: %v, want %q", err, want)
		}
	})
}

func TestChangesAndAck(t *testing.T) {
	forEachBackend(t, func(t *testing.T, location string) {
		ctx := context.Background()
		s := open(t, location)
		// 30 runs at 1000 tps, then 15 at 970: one change, at run 30.
		tps := func(i int) float64 {
			noise := []float64{3, -8, 5, 1, -4, 9, -2, -6, 7, -5}[i%10]
			if i >= 30 {
				return 970 + noise
			}
			return 1000 + noise
		}
		record := func(from, to int) {
			for i := from; i < to; i++ {
				f, raw := variant(t, time.Duration(i)*time.Hour, tps(i))
				add(t, s, f, raw, store.Meta{Label: "main", Commit: fmt.Sprintf("c%02d", i)})
			}
		}
		record(0, 45)
		changes, warns, err := s.Changes(ctx, store.Filter{Measure: "tps"}, stats.ChangePointOptions{})
		if err != nil || len(warns) > 0 {
			t.Fatal(err, warns)
		}
		if len(changes) != 1 {
			t.Fatalf("changes %v, want one", changes)
		}
		c := changes[0]
		if c.Index != 30 || c.Before.Commit != "c29" || c.After.Commit != "c30" || !(c.Change < -0.02 && c.Change > -0.04) {
			t.Errorf("change %+v, want -3%% between c29 and c30", c)
		}
		if err := s.Ack(ctx, c.Series.ID, c.After.ResultID, "known: new default"); err != nil {
			t.Fatal(err)
		}
		if err := s.Ack(ctx, c.Series.ID, 999999, ""); err == nil {
			t.Error("ack of a result the series has no point from: no error")
		}
		changes, _, err = s.Changes(ctx, store.Filter{Measure: "tps"}, stats.ChangePointOptions{})
		if err != nil || len(changes) != 0 {
			t.Errorf("after the ack: %v, %v; want none", changes, err)
		}
		// A second change after the acknowledged one is reported alone.
		for i := 45; i < 60; i++ {
			f, raw := variant(t, time.Duration(i)*time.Hour, tps(i)+30)
			add(t, s, f, raw, store.Meta{Label: "main", Commit: fmt.Sprintf("c%02d", i)})
		}
		changes, _, err = s.Changes(ctx, store.Filter{Measure: "tps"}, stats.ChangePointOptions{})
		if err != nil || len(changes) != 1 || changes[0].After.Commit != "c45" || changes[0].Change < 0.02 {
			t.Errorf("after more runs: %v, %v; want one +3%% change at c45", changes, err)
		}
	})
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	// A result file given as the store.
	_, err := store.Open(ctx, filepath.Join("testdata", "run-c2-a.json"))
	if err == nil || !strings.Contains(err.Error(), "not an SQLite database") {
		t.Errorf("a JSON file as the store: %v", err)
	}
	// A server that is not there: the error names it without its password.
	_, err = store.Open(ctx, "postgres://bench:hunter2@127.0.0.1:1/history?connect_timeout=2")
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "postgres://bench:xxxxx@127.0.0.1:1/history") {
		t.Errorf("unreachable server: %v", err)
	}
}

func TestURLLocation(t *testing.T) {
	loc := newDatabase(t)
	var host, port, db string
	for _, kv := range strings.Fields(loc) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "host":
			host = v
		case "port":
			port = v
		case "dbname":
			db = v
		}
	}
	s := open(t, fmt.Sprintf("postgresql://postgres@/%s?host=%s&port=%s", db, host, port))
	if s.Kind() != store.Postgres {
		t.Errorf("kind %v", s.Kind())
	}
}
