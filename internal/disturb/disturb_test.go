package disturb_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/script"
)

func TestParseSpec(t *testing.T) {
	s := time.Second
	good := []struct {
		in       string
		head     string
		start    time.Duration
		end      time.Duration
		sessions int
	}{
		{"ddl-churn@15s-30s", "ddl-churn", 15 * s, 30 * s, 1},
		{"checkpoint@20s", "checkpoint", 20 * s, 0, 1},
		{"ddl.sql@10s-25s:2", "ddl.sql", 10 * s, 25 * s, 2},
		{"checkpoint=10s@0-1m", "checkpoint=10s", 0, time.Minute, 1},
		{"a@b.sql@2.5-4", "a@b.sql", 2500 * time.Millisecond, 4 * s, 1},
		{"vacuum@500ms-1m30s:3", "vacuum", 500 * time.Millisecond, 90 * s, 3},
	}
	for _, g := range good {
		got, err := disturb.ParseSpec(g.in)
		if err != nil {
			t.Errorf("ParseDisturbSpec(%q): %v", g.in, err)
			continue
		}
		if got.Head != g.head || got.Window.Start != g.start || got.Window.End != g.end || got.Sessions != g.sessions {
			t.Errorf("ParseDisturbSpec(%q) = %+v; want head %q, %v-%v, %d sessions", g.in, got, g.head, g.start, g.end, g.sessions)
		}
	}
	bad := map[string]string{
		"ddl-churn":           "no window",
		"@15s":                "no name",
		"ddl-churn@":          "start is missing",
		"ddl-churn@15s+30s":   "not a time",
		"ddl-churn@30s-15s":   "end must come after",
		"ddl-churn@15s-15s":   "end must come after",
		"ddl-churn@15s-30s:0": "not a positive integer",
		"ddl-churn@15s-30s:x": "not a positive integer",
		"ddl-churn@-5s":       "start is missing",
		"ddl-churn@15s-":      "end is missing",
	}
	for in, want := range bad {
		_, err := disturb.ParseSpec(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDisturbSpec(%q) error = %v; want one saying %q", in, err, want)
		}
	}
}

func dist(name, spec string, start, end time.Duration) disturb.Disturbance {
	return disturb.Disturbance{Name: name, Spec: spec, Window: disturb.Window{Start: start, End: end}, Sessions: 1}
}

func TestCheckSchedule(t *testing.T) {
	s := time.Second
	T := 40 * s
	tests := []struct {
		name  string
		ds    []disturb.Disturbance
		index int // -1: fine
		want  string
	}{
		{"fine", []disturb.Disturbance{dist("ddl-churn", "a", 15*s, 30*s), dist("checkpoint", "b", 20*s, 0)}, -1, ""},
		{"different names may overlap", []disturb.Disturbance{dist("ddl-churn", "a", 15*s, 30*s), dist("vacuum", "b", 10*s, 35*s)}, -1, ""},
		{"same name, one after the other", []disturb.Disturbance{dist("ddl-churn", "a", 5*s, 10*s), dist("ddl-churn", "b", 10*s, 20*s)}, -1, ""},
		{"ends at the end", []disturb.Disturbance{dist("ddl-churn", "a", 0, T)}, -1, ""},
		{"ends after the run", []disturb.Disturbance{dist("ddl-churn", "a", 15*s, 50*s)}, 0, "ends at 50s, after the end of the run (-T 40s)"},
		{"starts after the run", []disturb.Disturbance{dist("checkpoint", "a", 40*s, 0)}, 0, "starts at 40s"},
		{"overlap", []disturb.Disturbance{dist("ddl-churn", "a", 15*s, 30*s), dist("x", "b", 1*s, 2*s), dist("ddl-churn", "c", 25*s, 35*s)}, 2, "overlaps a"},
		{"open end overlaps later window", []disturb.Disturbance{dist("checkpoint", "a", 10*s, 0), dist("checkpoint", "b", 30*s, 35*s)}, 1, "overlaps a"},
	}
	for _, tt := range tests {
		err := disturb.CheckSchedule(tt.ds, T)
		if tt.index < 0 {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		se, ok := err.(*disturb.ScheduleError)
		if !ok || se.Index != tt.index || !strings.Contains(se.Msg, tt.want) {
			t.Errorf("%s: error %#v; want index %d saying %q", tt.name, err, tt.index, tt.want)
		}
	}
}

func TestEdges(t *testing.T) {
	s := time.Second
	dt := &disturb.Disturber{Disturbances: []disturb.Disturbance{
		dist("ddl-churn", "a", 15*s, 30*s), dist("checkpoint", "b", 0, 0),
	}}
	at := func(start time.Duration, warmup time.Duration) []string {
		var out []string
		for _, e := range dt.Edges(start, start+s, warmup) {
			if e.Start {
				out = append(out, "["+e.Name+" started]")
			} else {
				out = append(out, "["+e.Name+" stopped]")
			}
		}
		return out
	}
	check := func(name string, got []string, want ...string) {
		t.Helper()
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: markers %q, want %q", name, got, want)
		}
	}
	check("line at 15.0 s", at(14*s, 0), "[ddl-churn started]")
	check("line at 16.0 s", at(15*s, 0))
	check("line at 30.0 s", at(29*s, 0), "[ddl-churn stopped]")
	check("first line, window at 0", at(0, 0), "[checkpoint started]")
	check("after a warm-up, window at 0 marks the warm-up's last line", at(-s, 3*s), "[checkpoint started]")
	check("after a warm-up, not again on the first measured line", at(0, 3*s))
}

func TestCheckScript(t *testing.T) {
	for src, ok := range map[string]bool{
		"SELECT 1;\n\\sleep 100ms\n":                         true,
		"\\startpipeline\nSELECT 1;\n\\endpipeline\n":        false,
		"\\set x random(1, 10)\nSELECT :x;\n\\sleep :x ms\n": true,
	} {
		s, err := script.Parse("t.sql", src)
		if err != nil {
			t.Fatal(err)
		}
		if err := disturb.CheckScript(s); (err == nil) != ok {
			t.Errorf("CheckDisturbScript(%q) = %v; want ok %v", src, err, ok)
		}
	}
}
