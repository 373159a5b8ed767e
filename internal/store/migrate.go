package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// migration brings a store from version-1 to version. Statements are
// written once; {id} is replaced by each backend's auto-numbered key.
type migration struct {
	version int
	stmts   []string
}

// migrations are the schema's history, oldest first; a release only ever
// appends to it. docs/history.md describes the schema.
var migrations = []migration{
	{1, []string{
		`CREATE TABLE pgscale_machines (
			fingerprint TEXT PRIMARY KEY,
			os TEXT NOT NULL,
			cpu_model TEXT NOT NULL,
			cpus INTEGER NOT NULL,
			memory_gib INTEGER NOT NULL,
			kernel TEXT NOT NULL)`,
		`CREATE TABLE pgscale_results (
			id {id},
			digest TEXT NOT NULL UNIQUE,
			label TEXT NOT NULL,
			commit_id TEXT NOT NULL,
			started TEXT NOT NULL,
			recorded TEXT NOT NULL,
			machine TEXT NOT NULL REFERENCES pgscale_machines (fingerprint),
			workload TEXT NOT NULL,
			complete BOOLEAN NOT NULL,
			body TEXT NOT NULL)`,
		`CREATE TABLE pgscale_series (
			id {id},
			workload TEXT NOT NULL,
			label TEXT NOT NULL,
			clients INTEGER NOT NULL,
			measure TEXT NOT NULL,
			machine TEXT NOT NULL REFERENCES pgscale_machines (fingerprint),
			unit TEXT NOT NULL,
			higher_is_better BOOLEAN NOT NULL,
			UNIQUE (workload, label, clients, measure, machine))`,
		`CREATE TABLE pgscale_points (
			series_id BIGINT NOT NULL REFERENCES pgscale_series (id),
			result_id BIGINT NOT NULL REFERENCES pgscale_results (id),
			value DOUBLE PRECISION NOT NULL,
			lo DOUBLE PRECISION,
			hi DOUBLE PRECISION,
			n INTEGER NOT NULL,
			PRIMARY KEY (series_id, result_id))`,
		`CREATE INDEX pgscale_points_result ON pgscale_points (result_id)`,
		`CREATE TABLE pgscale_acks (
			series_id BIGINT NOT NULL REFERENCES pgscale_series (id),
			result_id BIGINT NOT NULL REFERENCES pgscale_results (id),
			note TEXT NOT NULL,
			acked TEXT NOT NULL,
			PRIMARY KEY (series_id, result_id))`,
	}},
}

// SchemaVersion is the version of the store's schema this pgscale writes:
// that of the last migration.
const SchemaVersion = 1

// ErrNewerSchema is returned (wrapped) by Open for a store whose schema is
// newer than this pgscale knows.
var ErrNewerSchema = errors.New("store made by a newer pgscale")

// migrate brings the store's schema to the last of migs in one transaction,
// or refuses a store newer than that. On PostgreSQL an advisory lock keeps
// two pgscales from migrating at once; on SQLite the immediate transaction
// does.
func (s *Store) migrate(ctx context.Context, migs []migration) error {
	latest := migs[len(migs)-1].version
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if s.kind == Postgres {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7468120119203)`); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS pgscale_schema_version (version INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("cannot create the schema version table: %w", s.explain(err))
		}
		var v int
		err := tx.QueryRowContext(ctx, `SELECT version FROM pgscale_schema_version`).Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if _, err := tx.ExecContext(ctx, `INSERT INTO pgscale_schema_version (version) VALUES (0)`); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		if v > latest {
			return fmt.Errorf("%w: its schema is version %d, this pgscale knows up to %d; use a newer pgscale", ErrNewerSchema, v, latest)
		}
		for _, m := range migs {
			if m.version <= v {
				continue
			}
			for _, st := range m.stmts {
				if _, err := tx.ExecContext(ctx, s.ddl(st)); err != nil {
					return fmt.Errorf("migration to schema version %d: %w", m.version, err)
				}
			}
			v = m.version
		}
		_, err = tx.ExecContext(ctx, `UPDATE pgscale_schema_version SET version = $1`, v)
		return err
	})
}

// ddl fills in the backend's spelling of an auto-numbered primary key.
func (s *Store) ddl(stmt string) string {
	id := "INTEGER PRIMARY KEY"
	if s.kind == Postgres {
		id = "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
	}
	return strings.ReplaceAll(stmt, "{id}", id)
}

// explain turns SQLite's answer to a file that is not a database into
// words a user can act on.
func (s *Store) explain(err error) error {
	if s.kind == SQLite && strings.Contains(err.Error(), "file is not a database") {
		return errors.New("the file is not an SQLite database (is it a result file? a store is a separate file)")
	}
	return err
}

// inTx runs f in a transaction and commits it, or rolls it back when f
// fails (or panics).
func (s *Store) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	defer tx.Rollback() // after Commit, a no-op
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}
