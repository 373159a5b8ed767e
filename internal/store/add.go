package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/stats"
)

// Meta is what the caller says about a result file it records: which line
// of history its target belongs to and which commit it measured.
type Meta struct {
	// Label names the target's line of history ("main", "patched"); it is
	// part of every series key. Empty means the file's target name, or
	// "default" when it has none.
	Label string
	// Commit is the commit the target was built from (CommitFromEnv,
	// GitCommit); empty when unknown, and the point then goes by its label.
	Commit string
	// Workload names the workload in the series keys; empty means
	// WorkloadKey of the file's. A suite's cell goes by CellKey.
	Workload string
}

// Recorded says what Add stored.
type Recorded struct {
	// ResultID identifies the stored file.
	ResultID int64
	// Points counts the points indexed from it.
	Points int
	// Duplicate is true when the same bytes were stored before, as
	// ResultID; nothing new was stored.
	Duplicate bool
	// Machine is the machine the file was measured on.
	Machine Machine
	// Label is the label its points went under.
	Label string
	// Target is the target of a micro-benchmark run whose part this row
	// holds (AddMicro); empty for a result file.
	Target string
}

// The kinds of stored rows: a result file, or one target's part of a
// micro-benchmark run file.
const (
	KindResult = "result"
	KindMicro  = "micro"
)

// insertMachine records a machine, once.
func insertMachine(ctx context.Context, tx *sql.Tx, m Machine) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO pgscale_machines (fingerprint, os, cpu_model, cpus, memory_gib, kernel)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (fingerprint) DO NOTHING`,
		m.Fingerprint, m.OS, m.CPUModel, m.CPUs, m.MemoryGiB, m.Kernel)
	return err
}

// resultRow is a row of pgscale_results to insert.
type resultRow struct {
	digest, kind, workload, machine string
	meta                            Meta
	started                         time.Time
	complete                        bool
	body                            []byte
}

// insertResult inserts a row of pgscale_results and returns its id, or
// the id of the row with the same digest stored before and true.
func insertResult(ctx context.Context, tx *sql.Tx, r resultRow) (int64, bool, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO pgscale_results (digest, label, commit_id, started, recorded, machine, workload, complete, body, kind)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (digest) DO NOTHING RETURNING id`,
		r.digest, r.meta.Label, r.meta.Commit, formatTime(r.started), formatTime(time.Now()), r.machine, r.workload, r.complete, string(r.body), r.kind).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.QueryRowContext(ctx, `SELECT id FROM pgscale_results WHERE digest = $1`, r.digest).Scan(&id)
		return id, true, err
	}
	return id, false, err
}

// insertPoints indexes the points of a stored row in their series,
// making the series that do not exist yet, and returns how many it
// indexed.
func insertPoints(ctx context.Context, tx *sql.Tx, resultID int64, workload, label, machine string, points []point) (int, error) {
	for _, p := range points {
		var series int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO pgscale_series (workload, label, clients, measure, machine, unit, higher_is_better)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (workload, label, clients, measure, machine) DO UPDATE SET unit = excluded.unit RETURNING id`,
			workload, label, p.clients, p.measure, machine, p.unit, p.higher).Scan(&series); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO pgscale_points (series_id, result_id, value, lo, hi, n) VALUES ($1, $2, $3, $4, $5, $6)`,
			series, resultID, p.value, nullFloat(p.lo), nullFloat(p.hi), p.n); err != nil {
			return 0, err
		}
	}
	return len(points), nil
}

// Add stores a result file whole and indexes its points: for every client
// count with complete steps and every measure, one point in the series
// (workload, label, clients, measure, machine), the median over the A/B
// rounds (one step outside A/B runs) with its distribution-free interval
// where there are enough rounds for one. raw is the file's JSON as read;
// f may be nil (it is then decoded from raw), or raw nil (it is then
// encoded from f). A file that does not validate, or that holds a password
// anywhere, is refused whole. Adding the same bytes again stores nothing
// and says so.
func (s *Store) Add(ctx context.Context, f *result.File, raw []byte, meta Meta) (Recorded, error) {
	f, raw, err := checkFile(f, raw)
	if err != nil {
		return Recorded{}, err
	}
	if meta.Label == "" {
		meta.Label = f.Target.Name
	}
	if meta.Label == "" {
		meta.Label = "default"
	}
	m := FingerprintOf(f.Environment)
	sum := sha256.Sum256(raw)
	digest := hex.EncodeToString(sum[:])
	workload := meta.Workload
	if workload == "" {
		workload = WorkloadKey(f.Workload)
	}
	rec := Recorded{Machine: m, Label: meta.Label}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := insertMachine(ctx, tx, m); err != nil {
			return err
		}
		id, dup, err := insertResult(ctx, tx, resultRow{digest: digest, kind: KindResult, meta: meta, workload: workload,
			started: f.Started, machine: m.Fingerprint, complete: f.Complete, body: raw})
		if err != nil {
			return err
		}
		rec.ResultID, rec.Duplicate = id, dup
		if dup {
			return nil
		}
		rec.Points, err = insertPoints(ctx, tx, id, workload, meta.Label, m.Fingerprint, s.points(f))
		return err
	})
	if err != nil {
		return Recorded{}, fmt.Errorf("store %s: recording a result: %w", s.location, err)
	}
	return rec, nil
}

// Check checks a result file's bytes as Add does before storing them: the
// JSON Schema, the rules result.Validate applies and no password anywhere.
// Its error is one line, "not stored: ...".
func Check(raw []byte) error {
	_, _, err := checkFile(nil, raw)
	return err
}

// checkFile makes f and raw agree and checks both as result.Read would,
// and for passwords anywhere in raw.
func checkFile(f *result.File, raw []byte) (*result.File, []byte, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("not stored: "+format, args...)
	}
	if raw == nil {
		if f == nil {
			return nil, nil, errors.New("not stored: no result file given")
		}
		var err error
		if raw, err = json.MarshalIndent(f, "", " "); err != nil {
			return nil, nil, bad("%v", err)
		}
		raw = append(raw, '\n')
	}
	if err := result.ValidateJSON(raw); err != nil {
		return nil, nil, bad("not a valid pgscale result file: %s", oneLine(err))
	}
	var decoded result.File
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return nil, nil, bad("not a pgscale result file: %v", err)
	}
	if f == nil {
		f = &decoded
	} else if a, b := mustJSON(f), mustJSON(&decoded); !bytes.Equal(a, b) {
		return nil, nil, bad("the result file and its bytes differ")
	}
	if err := f.Validate(); err != nil {
		return nil, nil, bad("%s", oneLine(err))
	}
	where, err := secret.FindInJSON(raw)
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	if where != "" {
		return nil, nil, bad("%s holds an unredacted password; redact it (password=xxxxx) before storing", where)
	}
	return f, raw, nil
}

func mustJSON(f *result.File) []byte {
	b, _ := json.Marshal(f)
	return b
}

// oneLine joins the lines of a multi-error (or of a driver's error that
// lists each address it tried) into one line.
func oneLine(err error) string {
	s := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
	return strings.ReplaceAll(s, ":; ", ": ")
}

// lineError is an error shown on one line that still unwraps to its cause.
type lineError struct{ err error }

func (e lineError) Error() string { return oneLine(e.err) }
func (e lineError) Unwrap() error { return e.err }

// point is one indexed value of a result file.
type point struct {
	clients       int
	measure, unit string
	higher        bool
	value, lo, hi float64
	n             int
}

// points returns the points of f: per client count and measure, the median
// of the complete steps' values and its interval.
func (s *Store) points(f *result.File) []point {
	byClients := map[int][]*result.Step{}
	var counts []int
	for i := range f.Steps {
		st := &f.Steps[i]
		if !st.Complete {
			continue
		}
		if byClients[st.Clients] == nil {
			counts = append(counts, st.Clients)
		}
		byClients[st.Clients] = append(byClients[st.Clients], st)
	}
	slices.Sort(counts)
	var out []point
	for _, c := range counts {
		for _, m := range s.measures {
			var vs []float64
			for _, st := range byClients[c] {
				if v := m.Value(st); !math.IsNaN(v) && !math.IsInf(v, 0) {
					vs = append(vs, v)
				}
			}
			if len(vs) == 0 {
				continue
			}
			sum := stats.Summarize(vs, stats.Options{})
			out = append(out, point{clients: c, measure: m.Name, unit: m.Unit, higher: m.Direction == stats.HigherIsBetter,
				value: sum.Median, lo: sum.Lo, hi: sum.Hi, n: sum.N})
		}
	}
	return out
}

// WorkloadKey names a workload in series keys: its name and the options
// that change what a transaction is, in pgbench's letters: "select-only
// -s 1 -M prepared". A suite cell will go by its cell name the same way.
func WorkloadKey(w result.Workload) string {
	parts := []string{w.Name}
	if len(w.Scripts) > 1 {
		ws := make([]string, len(w.Scripts))
		for i, sc := range w.Scripts {
			ws[i] = strconv.Itoa(sc.Weight)
		}
		parts = append(parts, "@"+strings.Join(ws, ":"))
	}
	if w.Scale > 0 {
		parts = append(parts, "-s "+strconv.Itoa(w.Scale))
	}
	if w.Protocol != "" {
		parts = append(parts, "-M "+w.Protocol)
	}
	if w.Connect {
		parts = append(parts, "-C")
	}
	if w.RateTPS > 0 {
		parts = append(parts, "-R "+strconv.FormatFloat(w.RateTPS, 'f', -1, 64))
	}
	if w.LatencyLimitMs > 0 {
		parts = append(parts, "-L "+strconv.FormatFloat(w.LatencyLimitMs, 'f', -1, 64))
	}
	keys := make([]string, 0, len(w.Defines))
	for k := range w.Defines {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		parts = append(parts, "-D "+k+"="+w.Defines[k])
	}
	return strings.Join(parts, " ")
}

// CellKey names a suite's cell in series keys: the suite's name and the
// cell's parameters, "fastpath partitions=32,rows=100". The workload
// filter's name is then the suite's.
func CellKey(suite, cell string) string { return suite + " " + cell }

// timeLayout is how times are kept: UTC, fixed width, so that text order
// is time order on both backends.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) { return time.Parse(timeLayout, s) }

// nullFloat stores an infinite interval end as NULL.
func nullFloat(x float64) sql.NullFloat64 {
	return sql.NullFloat64{Float64: x, Valid: !math.IsInf(x, 0) && !math.IsNaN(x)}
}
