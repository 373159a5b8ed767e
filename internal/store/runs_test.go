package store_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/store"
)

func TestRunsAndBaseline(t *testing.T) {
	forEachBackend(t, func(t *testing.T, location string) {
		ctx := context.Background()
		s := open(t, location)
		// main: c1 twice, then c2 twice; patched: one run; and a run of
		// another workload whose key starts with the same name.
		runs := []struct {
			label, commit string
			at            time.Duration
		}{
			{"main", "c1aaaaa", 0}, {"main", "c1aaaaa", time.Hour}, {"main", "c2bbbbb", 2 * time.Hour},
			{"main", "c2bbbbb", 3 * time.Hour}, {"patched", "p1", 4 * time.Hour},
		}
		var ids []int64
		for _, r := range runs {
			f, raw := variant(t, r.at, 1000+float64(r.at/time.Hour))
			ids = append(ids, add(t, s, f, raw, store.Meta{Label: r.label, Commit: r.commit}).ResultID)
		}
		other, _ := variant(t, 5*time.Hour, 900)
		other.Workload.Connect = true // "select-only -s 1 -M prepared -C"
		add(t, s, other, nil, store.Meta{Label: "main", Commit: "c3"})

		key := store.WorkloadKey(recorded(t, "run-c2-a.json").Workload)
		machine := store.FingerprintOf(recorded(t, "run-c2-a.json").Environment).Fingerprint
		all, err := s.Runs(ctx, store.Filter{Workload: key})
		if err != nil || len(all) != 5 {
			t.Fatalf("runs of %q: %v, %v; want 5", key, all, err)
		}
		for i, r := range all {
			if r.ResultID != ids[i] || r.Workload != key || r.Machine != machine || !r.Complete {
				t.Errorf("run %d: %+v, want result %d", i, r, ids[i])
			}
		}
		if byName, err := s.Runs(ctx, store.Filter{Name: "select-only"}); err != nil || len(byName) != 6 {
			t.Errorf("runs of workload name select-only: %d, %v; want 6 (both keys)", len(byName), err)
		}
		if none, err := s.Runs(ctx, store.Filter{Name: "select"}); err != nil || len(none) != 0 {
			t.Errorf("runs of workload name select: %d, %v; want none (a name is a whole word)", len(none), err)
		}
		series, err := s.Series(ctx, store.Filter{Label: "patched", Measure: "tps"})
		if err != nil || len(series) != 1 {
			t.Fatal(series, err)
		}
		if byID, err := s.Series(ctx, store.Filter{ID: series[0].ID}); err != nil || len(byID) != 1 || byID[0].Key != series[0].Key {
			t.Errorf("series by id %d: %v, %v", series[0].ID, byID, err)
		}

		for _, c := range []struct {
			label, commit string
			want          []int64
			err           string
		}{
			{"main", "", ids[2:4], ""},        // the newest run's commit
			{"main", "c1", ids[0:2], ""},      // a prefix
			{"main", "c2bbbbb", ids[2:4], ""}, // the whole commit
			{"patched", "", ids[4:5], ""},
			{"main", "c", nil, "2 stored commits start with c"},
			{"main", "d", nil, "no stored run of commit d"},
			{"nobody", "", nil, "no stored run of label nobody"},
		} {
			got, err := s.Baseline(ctx, c.label, c.commit, key, machine)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("baseline %s@%s: %v, %v; want error %q", c.label, c.commit, got, err, c.err)
				}
				continue
			}
			if err != nil || len(got) != len(c.want) {
				t.Errorf("baseline %s@%s: %v, %v; want results %v", c.label, c.commit, got, err, c.want)
				continue
			}
			for i := range got {
				if got[i].ResultID != c.want[i] {
					t.Errorf("baseline %s@%s: results %v, want %v", c.label, c.commit, got, c.want)
				}
			}
		}
		// A label whose newest run recorded no commit: that run alone.
		f, raw := variant(t, 6*time.Hour, 1000)
		nc := add(t, s, f, raw, store.Meta{Label: "patched"})
		if got, err := s.Baseline(ctx, "patched", "", key, machine); err != nil || len(got) != 1 || got[0].ResultID != nc.ResultID {
			t.Errorf("baseline of a run without a commit: %v, %v", got, err)
		}

		back, err := s.File(ctx, ids[0])
		if err != nil || back.Steps[0].Summary.TPS != 1000 {
			t.Errorf("file %d: %v", ids[0], err)
		}
	})
}

func TestCheck(t *testing.T) {
	_, raw := variant(t, 0, 1000)
	if err := store.Check(raw); err != nil {
		t.Errorf("a good file: %v", err)
	}
	err := store.Check([]byte(`{"schema": "pgscale.result"}`))
	if err == nil || !strings.HasPrefix(err.Error(), "not stored: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a bad file: %v, want one line", err)
	}
}

// Without measures given, a store indexes every measure compare compares
// that the file holds: the server's CPU per transaction of a run with the
// process probe too, with no schema change.
func TestDefaultMeasures(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f := recorded(t, "run-c2-a.json")
	rec := add(t, s, f, nil, store.Meta{Label: "main"})
	series, err := s.Series(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sr := range series {
		names = append(names, sr.Measure)
	}
	for _, want := range []string{"tps", "p50", "p99", "client-cpu/txn", "server-cpu/txn"} {
		if !slices.Contains(names, want) {
			t.Errorf("measures indexed %v lack %s", names, want)
		}
	}
	if rec.Points != len(series) {
		t.Errorf("%d points recorded, %d series", rec.Points, len(series))
	}
}
