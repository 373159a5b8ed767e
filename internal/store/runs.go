package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/result"
)

// Run is one stored result file, without its body.
type Run struct {
	// ResultID identifies the stored file.
	ResultID int64
	// Label and Commit are as recorded; Started is when the run started.
	Label, Commit string
	Started       time.Time
	// Workload is the workload key and Machine the machine fingerprint.
	Workload, Machine string
	// Complete is the file's own flag.
	Complete bool
	// Kind is KindResult for a result file, KindMicro for a target's part
	// of a micro-benchmark run file.
	Kind string
}

// Name returns the commit, or the label when no commit was recorded.
func (r Run) Name() string {
	if r.Commit != "" {
		return r.Commit
	}
	return r.Label
}

// Runs lists the stored result files with a point in a series matching f,
// in time order (ties in the order they were recorded).
func (s *Store) Runs(ctx context.Context, f Filter) ([]Run, error) {
	cond, args := f.where()
	rows, err := s.db.QueryContext(ctx, `SELECT r.id, r.label, r.commit_id, r.started, r.workload, r.machine, r.complete, r.kind
		FROM pgscale_results r
		WHERE EXISTS (SELECT 1 FROM pgscale_points p JOIN pgscale_series s ON s.id = p.series_id
			WHERE p.result_id = r.id AND `+cond+`)
		ORDER BY r.started, r.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store %s: listing runs: %w", s.location, err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var started string
		if err := rows.Scan(&r.ResultID, &r.Label, &r.Commit, &started, &r.Workload, &r.Machine, &r.Complete, &r.Kind); err != nil {
			return nil, fmt.Errorf("store %s: listing runs: %w", s.location, err)
		}
		if r.Started, err = parseTime(started); err != nil {
			return nil, fmt.Errorf("store %s: result %d: start time %q: %w", s.location, r.ResultID, started, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store %s: listing runs: %w", s.location, err)
	}
	return out, nil
}

// Baseline returns the stored runs of label on one workload (its whole
// key) and machine that a new result is compared with, in time order: the
// runs of the commit given (a prefix of it is enough when only one stored
// commit has it), or, when commit is empty, those of the commit the
// label's newest run there measured — that run alone when it recorded no
// commit, since runs without one cannot be told apart by what they ran.
func (s *Store) Baseline(ctx context.Context, label, commit, workload, machine string) ([]Run, error) {
	all, err := s.Runs(ctx, Filter{Label: label, Workload: workload, Machine: machine})
	if err != nil {
		return nil, err
	}
	var runs []Run // result files: a micro-benchmark run is no baseline of one
	for _, r := range all {
		if r.Kind == KindResult {
			runs = append(runs, r)
		}
	}
	what := fmt.Sprintf("label %s, workload %q, machine %s", label, workload, machine)
	if len(runs) == 0 {
		return nil, fmt.Errorf("store %s: no stored run of %s", s.location, what)
	}
	if commit == "" {
		newest := runs[len(runs)-1]
		if newest.Commit == "" {
			return []Run{newest}, nil
		}
		commit = newest.Commit
	}
	matches := map[string]bool{}
	for _, r := range runs {
		if r.Commit == commit {
			matches = map[string]bool{commit: true}
			break
		}
		if r.Commit != "" && strings.HasPrefix(r.Commit, commit) {
			matches[r.Commit] = true
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("store %s: no stored run of commit %s (%s)", s.location, commit, what)
	case 1:
	default:
		return nil, fmt.Errorf("store %s: %d stored commits start with %s (%s); give more of it", s.location, len(matches), commit, what)
	}
	var out []Run
	for _, r := range runs {
		if matches[r.Commit] {
			out = append(out, r)
		}
	}
	return out, nil
}

// File returns a stored result file decoded, checked as Add checked it. A
// row that holds a micro-benchmark run is refused in one line.
func (s *Store) File(ctx context.Context, id int64) (*result.File, error) {
	var kind, label, workload string
	err := s.db.QueryRowContext(ctx, `SELECT kind, label, workload FROM pgscale_results WHERE id = $1`, id).Scan(&kind, &label, &workload)
	if err == nil && kind != KindResult {
		return nil, fmt.Errorf("store %s: result %d is a micro-benchmark run (%s, label %s), not a result file: pgscale history show and check read its series; pgscale micro judges its file", s.location, id, workload, label)
	}
	raw, err := s.Result(ctx, id)
	if err != nil {
		return nil, err
	}
	f, _, err := checkFile(nil, raw)
	if err != nil {
		return nil, fmt.Errorf("store %s: result %d: %w", s.location, id, err)
	}
	return f, nil
}
