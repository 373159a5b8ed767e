package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pgscale/pgscale/internal/trend"
)

// Filter selects series; empty fields and zero numbers match all.
type Filter struct {
	// ID selects one series by its ID.
	ID int64
	// Workload matches the whole workload key ("select-only -s 1 -M
	// prepared"); Name matches the workload's name, the key's first word
	// ("select-only").
	Workload, Name          string
	Label, Measure, Machine string
	Clients                 int
}

// where returns the SQL condition on pgscale_series s for f and its
// arguments, numbered from $1.
func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	add := func(col string, v any) {
		args = append(args, v)
		conds = append(conds, "s."+col+" = $"+strconv.Itoa(len(args)))
	}
	if f.ID != 0 {
		add("id", f.ID)
	}
	if f.Workload != "" {
		add("workload", f.Workload)
	}
	if f.Name != "" {
		// The key is the name, or the name and options after a space.
		args = append(args, f.Name, utf8.RuneCountInString(f.Name)+1, f.Name+" ")
		n := len(args)
		conds = append(conds, fmt.Sprintf("(s.workload = $%d OR substr(s.workload, 1, $%d) = $%d)", n-2, n-1, n))
	}
	if f.Label != "" {
		add("label", f.Label)
	}
	if f.Clients != 0 {
		add("clients", f.Clients)
	}
	if f.Measure != "" {
		add("measure", f.Measure)
	}
	if f.Machine != "" {
		add("machine", f.Machine)
	}
	if len(conds) == 0 {
		return "TRUE", nil
	}
	return strings.Join(conds, " AND "), args
}

// seriesColumns and pointColumns are what scanSeries and scanPoint read.
const (
	seriesColumns = `s.id, s.workload, s.label, s.clients, s.measure, s.machine, s.unit, s.higher_is_better`
	pointColumns  = `p.result_id, p.value, p.lo, p.hi, p.n, r.label, r.commit_id, r.started`
	// pointOrder is time order, ties by the order of recording.
	pointOrder = `r.started, p.result_id`
	// ackedColumn is the acknowledged result of the series s that ran
	// last, or 0.
	ackedColumn = `coalesce((SELECT a.result_id FROM pgscale_acks a JOIN pgscale_results ar ON ar.id = a.result_id
			WHERE a.series_id = s.id ORDER BY ar.started DESC, a.result_id DESC LIMIT 1), 0)`
)

// Series lists the series matching f, with their point counts, newest
// points and acknowledgements, ordered by key (trend.Key.Before: the
// measures by importance).
func (s *Store) Series(ctx context.Context, f Filter) ([]trend.Series, error) {
	cond, args := f.where()
	rows, err := s.db.QueryContext(ctx, `SELECT `+seriesColumns+`,
			(SELECT count(*) FROM pgscale_points c WHERE c.series_id = s.id),
			`+ackedColumn+`,
			`+pointColumns+`
		FROM pgscale_series s
		JOIN pgscale_points p ON p.series_id = s.id
		JOIN pgscale_results r ON r.id = p.result_id
		WHERE `+cond+` AND p.result_id = (
			SELECT p2.result_id FROM pgscale_points p2 JOIN pgscale_results r2 ON r2.id = p2.result_id
			WHERE p2.series_id = s.id ORDER BY r2.started DESC, p2.result_id DESC LIMIT 1)
		ORDER BY s.workload, s.label, s.clients, s.measure, s.machine`, args...)
	if err != nil {
		return nil, fmt.Errorf("store %s: listing series: %w", s.location, err)
	}
	defer rows.Close()
	var out []trend.Series
	for rows.Next() {
		var sr trend.Series
		var lp rawPoint
		if err := rows.Scan(seriesDest(&sr, &sr.Count, &sr.AckedResult, lp.dest())...); err != nil {
			return nil, fmt.Errorf("store %s: listing series: %w", s.location, err)
		}
		if sr.Last, err = lp.point(); err != nil {
			return nil, fmt.Errorf("store %s: series %d: %w", s.location, sr.ID, err)
		}
		out = append(out, sr)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store %s: listing series: %w", s.location, err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key.Before(out[j].Key) })
	return out, nil
}

// seriesDest returns the scan destinations of seriesColumns into sr, then
// extra.
func seriesDest(sr *trend.Series, points *int, acked *int64, extra []any) []any {
	return append([]any{&sr.ID, &sr.Workload, &sr.Label, &sr.Clients, &sr.Measure, &sr.Machine, &sr.Unit, &sr.HigherIsBetter,
		points, acked}, extra...)
}

// rawPoint is a point as scanned, before its nullable and text columns are
// turned into values.
type rawPoint struct {
	p       trend.Point
	lo, hi  sql.NullFloat64
	started string
}

func (r *rawPoint) dest() []any {
	return []any{&r.p.ResultID, &r.p.Value, &r.lo, &r.hi, &r.p.N, &r.p.Label, &r.p.Commit, &r.started}
}

func (r *rawPoint) point() (trend.Point, error) {
	p := r.p
	p.Lo, p.Hi = math.NaN(), math.NaN()
	if r.lo.Valid {
		p.Lo = r.lo.Float64
	}
	if r.hi.Valid {
		p.Hi = r.hi.Float64
	}
	var err error
	if p.Time, err = parseTime(r.started); err != nil {
		return trend.Point{}, fmt.Errorf("result %d: start time %q: %w", p.ResultID, r.started, err)
	}
	return p, nil
}

// Points returns the points of one series in time order.
func (s *Store) Points(ctx context.Context, seriesID int64) ([]trend.Point, error) {
	h, err := s.history(ctx, `s.id = $1`, []any{seriesID})
	if err != nil {
		return nil, err
	}
	if len(h) == 0 {
		return nil, fmt.Errorf("store %s: no series %d", s.location, seriesID)
	}
	return h[0].Points, nil
}

// Export returns every series matching f with all its points in time
// order, ordered by key, for rendering in another format.
func (s *Store) Export(ctx context.Context, f Filter) ([]trend.History, error) {
	cond, args := f.where()
	return s.history(ctx, cond, args)
}

func (s *Store) history(ctx context.Context, cond string, args []any) ([]trend.History, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+seriesColumns+`, 0,
			`+ackedColumn+`,
			`+pointColumns+`
		FROM pgscale_series s
		JOIN pgscale_points p ON p.series_id = s.id
		JOIN pgscale_results r ON r.id = p.result_id
		WHERE `+cond+`
		ORDER BY s.workload, s.label, s.clients, s.measure, s.machine, `+pointOrder, args...)
	if err != nil {
		return nil, fmt.Errorf("store %s: reading points: %w", s.location, err)
	}
	defer rows.Close()
	var out []trend.History
	for rows.Next() {
		var sr trend.Series
		var n int
		var rp rawPoint
		if err := rows.Scan(seriesDest(&sr, &n, &sr.AckedResult, rp.dest())...); err != nil {
			return nil, fmt.Errorf("store %s: reading points: %w", s.location, err)
		}
		p, err := rp.point()
		if err != nil {
			return nil, fmt.Errorf("store %s: series %d: %w", s.location, sr.ID, err)
		}
		if len(out) == 0 || out[len(out)-1].ID != sr.ID {
			out = append(out, trend.History{Series: sr})
		}
		h := &out[len(out)-1]
		h.Points = append(h.Points, p)
		h.Count, h.Last = len(h.Points), p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store %s: reading points: %w", s.location, err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key.Before(out[j].Key) })
	return out, nil
}

// Result returns a stored result file's bytes, exactly as they were added.
func (s *Store) Result(ctx context.Context, id int64) ([]byte, error) {
	var body string
	err := s.db.QueryRowContext(ctx, `SELECT body FROM pgscale_results WHERE id = $1`, id).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store %s: no result %d", s.location, id)
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: reading result %d: %w", s.location, id, err)
	}
	return []byte(body), nil
}

// Ack acknowledges the change point of a series at the point of result
// resultID (the first point after the change): it is known, and change
// detection reports only change points after the newest acknowledged one.
func (s *Store) Ack(ctx context.Context, seriesID, resultID int64, note string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM pgscale_points WHERE series_id = $1 AND result_id = $2`, seriesID, resultID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("series %d has no point from result %d", seriesID, resultID)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO pgscale_acks (series_id, result_id, note, acked) VALUES ($1, $2, $3, $4)
			ON CONFLICT (series_id, result_id) DO UPDATE SET note = excluded.note, acked = excluded.acked`,
			seriesID, resultID, note, formatTime(time.Now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("store %s: acknowledging: %w", s.location, err)
	}
	return nil
}
