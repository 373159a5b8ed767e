package result_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/result"
)

func sample() *result.File {
	h := metrics.NewHistogram()
	metrics.RecordUS(h, 40)
	enc, _ := metrics.EncodeHistogram(h)
	return &result.File{
		Pgscale: "test", Complete: true, Command: []string{"pgscale", "run", "--dsn", "postgres://u:xxxxx@h/d"},
		Started: time.Unix(0, 0).UTC(), Finished: time.Unix(10, 0).UTC(),
		Environment: result.Environment{Hostname: "h", OS: "linux/amd64", CPUs: 2, GOMAXPROCS: 2},
		Target:      result.Target{Kind: "dsn", Description: "host=h", Settings: map[string]string{}},
		Workload: result.Workload{Name: "select-only", Scripts: []result.Script{{Name: "s", Weight: 1, Source: "SELECT 1;"}},
			Protocol: "prepared", MaxTries: 1, IntervalS: 1},
		Steps: []result.Step{{Clients: 1, IO: "raw", Complete: true, ElapsedS: 1, Histogram: enc,
			Summary:   result.Summary{Transactions: 1, TPS: 1},
			Intervals: []result.Interval{{LengthS: 1, Transactions: 1, TPS: 1, Histogram: enc}}}},
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "r.json")
	f := sample()
	if err := result.Write(path, f); err != nil {
		t.Fatal(err)
	}
	g, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Schema != result.Schema || g.Version != result.Version || g.Steps[0].Summary.TPS != 1 {
		t.Errorf("read back %+v", g)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("left temporary files: %v", entries)
	}
}

func TestReadRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(m map[string]any)
		want   string
	}{
		{"not pgscale", func(m map[string]any) { m["schema"] = "other" }, "schema"},
		{"future version", func(m map[string]any) { m["version"] = 99 }, "version"},
		{"missing steps", func(m map[string]any) { delete(m, "steps") }, "steps"},
		{"incomplete without reason", func(m map[string]any) { m["complete"] = false }, "incomplete_reason"},
		{"password in command", func(m map[string]any) {
			m["command"] = []any{"pgscale", "--dsn", "postgres://u:hunter2@h/d"}
		}, "password"},
		{"bad protocol", func(m map[string]any) { m["workload"].(map[string]any)["protocol"] = "telepathy" }, "protocol"},
		{"intervals disagree", func(m map[string]any) {
			m["steps"].([]any)[0].(map[string]any)["summary"].(map[string]any)["transactions"] = 7
		}, "intervals hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := json.Marshal(withDefaults(sample()))
			var m map[string]any
			json.Unmarshal(b, &m)
			tc.mutate(m)
			b, _ = json.Marshal(m)
			path := filepath.Join(t.TempDir(), "r.json")
			os.WriteFile(path, b, 0o644)
			_, err := result.Read(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

func withDefaults(f *result.File) *result.File {
	f.Schema, f.Version = result.Schema, result.Version
	return f
}

func TestWriteRefusesInvalid(t *testing.T) {
	f := sample()
	f.Complete = false // no reason given
	if err := result.Write(filepath.Join(t.TempDir(), "r.json"), f); err == nil {
		t.Error("wrote an incomplete file without a reason")
	}
}

// A run that measured nothing — no client connected, no interval ended —
// still writes its incomplete result: lists it never filled are written
// empty, as the schema wants, not as null.
func TestWriteIncompleteWithNothingMeasured(t *testing.T) {
	f := sample()
	f.Complete, f.Reason = false, "every client failed to connect"
	f.Command = nil
	f.Steps = []result.Step{{Clients: 5000, IO: "netpoll", Reason: "every client failed to connect"}}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := result.Write(path, f); err != nil {
		t.Fatalf("write: %v", err)
	}
	g, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Complete || g.Steps[0].Intervals == nil || len(g.Steps[0].Intervals) != 0 {
		t.Errorf("read back complete %v, intervals %#v", g.Complete, g.Steps[0].Intervals)
	}
}

// An A/B run that failed in its warm-up round (a counted server crashed)
// started no round and so ran on no layout, though it was to re-create its
// clusters every round: its files are still written, incomplete. A file
// that refuses to be written says why in a RefusedError, which writing
// elsewhere would not help.
func TestWriteABWithNoRoundStarted(t *testing.T) {
	f := sample()
	f.Complete, f.Reason = false, "warm-up round, target a: the server's process 1 died under Valgrind of signal 11: Segmentation fault"
	f.Steps = nil
	f.Target.Name = "a"
	f.AB = &result.AB{Run: "r", Baseline: "a", Rounds: 2, Reshuffle: 1,
		Targets: []result.ABTarget{{Name: "a", Spec: "settings:", File: "a.json"}, {Name: "b", Spec: "settings:", File: "b.json"}}}
	path := filepath.Join(t.TempDir(), "s3a", "a.json")
	if err := result.Write(path, f); err != nil {
		t.Fatalf("write: %v", err)
	}
	if _, err := result.Read(path); err != nil {
		t.Fatal(err)
	}
	f.AB.Order = [][]string{{"a", "b"}} // a round started, on no layout: a bug
	err := result.Write(path, f)
	var refused *result.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "refusing to write an invalid result: ab: reshuffle 1 without layouts") {
		t.Errorf("a round without a layout: %v", err)
	}
}

// A quoted keyword password is a leak too, and is refused.
func TestWriteRefusesAQuotedPassword(t *testing.T) {
	f := sample()
	f.Command = []string{"pgscale", "run", "--dsn", "host=h password='a b'"}
	if err := result.Write(filepath.Join(t.TempDir(), "r.json"), f); err == nil || !strings.Contains(err.Error(), "password") {
		t.Errorf("write: %v, want a refusal naming the password", err)
	}
}

// A password where pgscale does not put one — a server setting such as
// primary_conninfo — does not stop the result from being written: it is
// written without the password.
func TestWriteRedactsAPasswordInASetting(t *testing.T) {
	f := sample()
	f.Target.Settings = map[string]string{"primary_conninfo": "host=p user=r password=s3cret"}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := result.Write(path, f); err != nil {
		t.Fatalf("write: %v", err)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "s3cret") {
		t.Errorf("the password was written:\n%s", data)
	}
	g, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Target.Settings["primary_conninfo"] != "host=p user=r password=xxxxx" {
		t.Errorf("setting read back as %q", g.Target.Settings["primary_conninfo"])
	}
}

// A pgbouncer target records its pooler, and only a pgbouncer target does.
func TestPoolerTarget(t *testing.T) {
	pooler := &result.Pooler{Program: "pgbouncer", Version: "1.18.0", Settings: map[string]string{"pool_mode": "transaction"},
		Server: "host=/tmp/s port=5432 user=postgres dbname=postgres", ServerKind: "ephemeral"}
	for _, tc := range []struct {
		kind   string
		pooler *result.Pooler
		ok     bool
	}{
		{"pgbouncer", pooler, true},
		{"pgbouncer", nil, false},
		{"ephemeral", pooler, false},
	} {
		f := sample()
		f.Target.Kind, f.Target.Pooler = tc.kind, tc.pooler
		path := filepath.Join(t.TempDir(), "r.json")
		err := result.Write(path, f)
		if (err == nil) != tc.ok {
			t.Errorf("kind %s, pooler %v: write: %v", tc.kind, tc.pooler != nil, err)
			continue
		}
		if tc.ok {
			g, err := result.Read(path)
			if err != nil || g.Target.Pooler == nil || g.Target.Pooler.Settings["pool_mode"] != "transaction" {
				t.Errorf("read back: %+v, %v", g.Target.Pooler, err)
			}
		}
	}
}
