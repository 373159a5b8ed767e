package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"

	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/stats"
)

// MicroKey names a micro-benchmark run's benchmarks in series keys:
// "micro:PROJECT" (micro.Run.Project: "micro:microgo"). A suite's micro
// cell goes by CellKey(suite, MicroCell(cell)).
func MicroKey(project string) string { return micro.Prefix + project }

// MicroCell names a suite's micro cell among its cells: "micro:go".
func MicroCell(name string) string { return micro.Prefix + name }

// AddMicro stores a micro-benchmark run file: one row per target, each
// holding the whole file and indexing that target's measures as points,
// clients 0, each benchmark's measure a series named as a bound names it
// (micro.SeriesName: "micro:BenchmarkSum/n=1000" for its primary measure,
// "micro:BenchmarkSum/n=1000@cpu-ns/op" for another). A point is the
// median over the run's rounds with its distribution-free interval, as a
// result file's is over its A/B rounds. meta gives each target's label,
// commit and workload. The rows are stored in one transaction, the run
// whole or not at all; a target stored before is not stored again.
func (s *Store) AddMicro(ctx context.Context, raw []byte, meta func(micro.Target) Meta) ([]Recorded, error) {
	run, err := CheckMicro(raw)
	if err != nil {
		return nil, err
	}
	m := FingerprintOf(*run.Environment)
	var out []Recorded
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := insertMachine(ctx, tx, m); err != nil {
			return err
		}
		for _, ts := range run.Series() {
			mt := meta(ts.Target)
			if mt.Label == "" {
				mt.Label = ts.Target.Name
			}
			if mt.Workload == "" {
				mt.Workload = MicroKey(run.Project())
			}
			rec := Recorded{Machine: m, Label: mt.Label, Target: ts.Target.Name}
			id, dup, err := insertResult(ctx, tx, resultRow{digest: microDigest(ts.Target.Name, raw), kind: KindMicro, meta: mt,
				workload: mt.Workload, started: run.Started, machine: m.Fingerprint, complete: run.Complete(), body: raw})
			if err != nil {
				return err
			}
			rec.ResultID, rec.Duplicate = id, dup
			if !dup {
				if rec.Points, err = insertPoints(ctx, tx, id, mt.Workload, mt.Label, m.Fingerprint, microPoints(ts)); err != nil {
					return err
				}
			}
			out = append(out, rec)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store %s: recording a micro-benchmark run: %w", s.location, err)
	}
	return out, nil
}

// CheckMicro reads a micro-benchmark run file's bytes as AddMicro does
// before storing them: a run file of this pgscale's version, with the
// machine it ran on, and no password anywhere. Its error is one line,
// "not stored: ...".
func CheckMicro(raw []byte) (*micro.Run, error) {
	run, err := micro.ParseRun(raw)
	if err != nil {
		return nil, fmt.Errorf("not stored: not a micro-benchmark run file: %v", err)
	}
	if run.Environment == nil {
		return nil, errors.New("not stored: the micro-benchmark run records no machine to file its series under (it was written before pgscale recorded one); run the benchmarks again to keep their history")
	}
	if len(run.Targets) == 0 {
		return nil, errors.New("not stored: the micro-benchmark run has no target")
	}
	where, err := secret.FindInJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("not stored: %v", err)
	}
	if where != "" {
		return nil, fmt.Errorf("not stored: %s holds an unredacted password; redact it (password=xxxxx) before storing", where)
	}
	return run, nil
}

// microDigest identifies a target's row of a run file: one file holds
// every target, and each is a row of its own.
func microDigest(target string, raw []byte) string {
	h := sha256.New()
	h.Write([]byte(KindMicro + "\x00" + target + "\x00"))
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil))
}

// microPoints are a target's points: per measure, the median over the
// rounds and its interval.
func microPoints(ts micro.TargetSeries) []point {
	var out []point
	for _, mv := range ts.Measures {
		var vs []float64
		for _, v := range mv.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			continue
		}
		sum := stats.Summarize(vs, stats.Options{})
		out = append(out, point{measure: mv.Name(), unit: mv.Unit, higher: mv.Higher, value: sum.Median, lo: sum.Lo, hi: sum.Hi, n: sum.N})
	}
	return out
}
