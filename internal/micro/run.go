package micro

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pgscale/pgscale/internal/result"
)

// RunVersion is the version of the micro-benchmark run file.
const RunVersion = 1

// Run is what a micro-benchmark run measured, as the runner records it
// and its file keeps it: the command, its format, the targets' trees and
// every round's samples, so that the run can be judged again later.
type Run struct {
	Version int `json:"version"`
	// Name is a suite's micro cell's name; empty for pgscale micro.
	Name    string `json:"name,omitempty"`
	Command string `json:"command"`
	Format  string `json:"format"`
	// Output is the file the command writes its results to, relative to
	// its tree; empty: its standard output.
	Output  string    `json:"output,omitempty"`
	Started time.Time `json:"started"`
	// Environment is the machine the benchmarks ran on, as a result
	// file records it: a history store files the run's series under its
	// fingerprint. Runs written before it was recorded have none.
	Environment *result.Environment `json:"environment,omitempty"`
	// Targets are the trees the command ran in, the baseline first.
	Targets []Target `json:"targets"`
	Rounds  []Round  `json:"rounds"`
	// RoundsMax is the most rounds of a run that rounds until decided
	// (auto), Stopped why it stopped; 0 and empty for a fixed number.
	RoundsMax int    `json:"rounds_max,omitempty"`
	Stopped   string `json:"stopped,omitempty"`
	// Bounds, Groups and GroupUnit are how a suite's micro cell judges
	// the run (its bounds: and groups:), kept so that a report of the
	// bundle judges it the same way.
	Bounds    []string `json:"bounds,omitempty"`
	Groups    []string `json:"groups,omitempty"`
	GroupUnit string   `json:"group_unit,omitempty"`
	// Problems are what made the run incomplete, one line each: a
	// command that failed, output that did not parse, benchmarks that
	// only one side reports.
	Problems []string `json:"problems,omitempty"`
	// Counted says how a counted run (--count) counted; nil for a run of
	// the command as it is, whose measures are the program's own.
	Counted *Counted `json:"counted,omitempty"`
}

// Counted is how a run counted its benchmarks' instructions under
// Valgrind's callgrind: each benchmark run alone, in processes of its own,
// for N and for 2N iterations (or, in a program that chooses its
// iterations by time, for T and 2T seconds, the iterations it reported
// read); a round's value is the difference of the two counts divided by
// the difference of the iterations, what one more iteration costs, the
// process's start, the harness and the benchmark's set-up cancelled.
type Counted struct {
	// Events are what was counted: "instructions", or
	// "instructions,cache" with the cache and branch simulation.
	Events string `json:"events"`
	// Valgrind is the tool's version; Options its options.
	Valgrind string   `json:"valgrind"`
	Options  []string `json:"options"`
	// Iterations are each benchmark's N, chosen from the baseline's
	// calibration run; absent when every target was counted by time.
	Iterations map[string]int `json:"iterations,omitempty"`
	// Timed are the targets whose program would not run a fixed number
	// of iterations (Google Benchmark before 1.8), counted by time;
	// Seconds each benchmark's T there.
	Timed   []string           `json:"timed,omitempty"`
	Seconds map[string]float64 `json:"seconds,omitempty"`
	// Loop, when the format's program has them, are the functions whose
	// return and entry bound a benchmark's loop (Google Benchmark's
	// State::StartKeepRunning and FinishKeepRunning): only each process's
	// last loop, the run it reported, was counted.
	Loop []string `json:"loop,omitempty"`
	// Calibration are the targets' native runs of the command, from
	// which the benchmarks and their iterations were taken.
	Calibration []TargetRun `json:"calibration"`
}

// Complete reports whether the run has no problems.
func (r *Run) Complete() bool { return len(r.Problems) == 0 }

// Target is one tree the command ran in.
type Target struct {
	// Name is the target's name (base, cand).
	Name string `json:"name"`
	// Spec is the target as given: PATH, PATH@REV.
	Spec string `json:"spec"`
	// Commit is the commit the tree is at, when it is a git revision.
	Commit string `json:"commit,omitempty"`
}

// Round is one round: each target's run of the command, in the order
// they ran (the round's order alternates, A B then B A).
type Round struct {
	Runs []TargetRun `json:"runs"`
}

// TargetRun is one run of the command in one target's tree.
type TargetRun struct {
	Target  string   `json:"target"`
	Seconds float64  `json:"seconds"`
	Samples []Sample `json:"samples"`
}

// Write writes the run to path as JSON, atomically.
func (r *Run) Write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadRun reads a run file.
func ReadRun(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := ParseRun(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// ParseRun reads a run file's bytes.
func ParseRun(b []byte) (*Run, error) {
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if r.Version != RunVersion {
		return nil, fmt.Errorf("micro-benchmark run version %d, want %d", r.Version, RunVersion)
	}
	return &r, nil
}

// IsRun reports whether b looks like a micro-benchmark run file rather
// than a result file: a JSON object with a command string, a format and
// rounds (a result file's command is a list, and it has steps).
func IsRun(b []byte) bool {
	var probe struct {
		Command json.RawMessage `json:"command"`
		Format  *string         `json:"format"`
		Rounds  json.RawMessage `json:"rounds"`
	}
	if json.Unmarshal(b, &probe) != nil || probe.Format == nil || probe.Rounds == nil {
		return false
	}
	var cmd string
	return json.Unmarshal(probe.Command, &cmd) == nil
}
