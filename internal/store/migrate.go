package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/pgscale/pgscale/internal/migrate"
)

// migrations are the schema's history, oldest first; a release only ever
// appends to it. docs/history.md describes the schema. Statements are
// written once; {id} is replaced by each backend's auto-numbered key.
var migrations = []migrate.Migration{
	{Version: 1, Stmts: []string{
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
	// A row of pgscale_results is a result file, or one target's part of
	// a micro-benchmark run file (the whole file its body); what reads a
	// body as a result file refuses the others.
	{Version: 2, Stmts: []string{
		`ALTER TABLE pgscale_results ADD COLUMN kind TEXT NOT NULL DEFAULT 'result'`,
	}},
}

// SchemaVersion is the version of the store's schema this pgscale writes:
// that of the last migration.
const SchemaVersion = 2

// ErrNewerSchema is returned (wrapped) by Open for a store whose schema is
// newer than this pgscale knows.
var ErrNewerSchema = errors.New("store made by a newer pgscale")

// migrate brings the store's schema to the last of migs in one transaction,
// or refuses a store newer than that (internal/migrate, as the agents'
// schema is).
func (s *Store) migrate(ctx context.Context, migs []migrate.Migration) error {
	schema := migrate.Schema{Table: "pgscale_schema_version", Migrations: migs, Newer: ErrNewerSchema, Rewrite: s.ddl, Explain: s.explain}
	return s.inTx(ctx, func(tx *sql.Tx) error { return schema.Apply(ctx, migrate.SQL(tx), s.kind == Postgres) })
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
