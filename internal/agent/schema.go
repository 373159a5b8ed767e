package agent

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/pgscale/pgscale/internal/migrate"
)

// migrations are the coordination schema's history, oldest first; a
// release only ever appends to it (docs/agents.md describes the tables).
// The tables live beside a history store's when the same database serves
// both, under names of their own.
var migrations = []migrate.Migration{
	{Version: 1, Stmts: []string{
		// One row per coordinated run: how many agents it waits for, its
		// state (open: agents may join; measuring; done; failed;
		// cancelled) and the coordinator's heartbeat.
		`CREATE TABLE pgscale_agent_runs (
			id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			job TEXT NOT NULL,
			agents INTEGER NOT NULL,
			state TEXT NOT NULL,
			reason TEXT NOT NULL DEFAULT '',
			lost_after_ms INTEGER NOT NULL,
			coordinator TEXT NOT NULL,
			created TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
			heartbeat TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())`,
		`CREATE INDEX pgscale_agent_runs_job ON pgscale_agent_runs (job, id)`,
		// One row per agent of a run, its index the key: a second agent
		// with the same index (a restarted pod) cannot join.
		`CREATE TABLE pgscale_agent_members (
			run_id BIGINT NOT NULL REFERENCES pgscale_agent_runs (id) ON DELETE CASCADE,
			idx INTEGER NOT NULL,
			host TEXT NOT NULL,
			source_address TEXT NOT NULL,
			pid INTEGER NOT NULL,
			environment JSONB NOT NULL,
			joined TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
			heartbeat TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
			step INTEGER NOT NULL DEFAULT -1,
			state TEXT NOT NULL DEFAULT 'joined',
			note TEXT NOT NULL DEFAULT '',
			PRIMARY KEY (run_id, idx))`,
		// One row per step: its plan (the agents' shares, the workload,
		// the target without a password) and, once every agent is ready,
		// the start instant on the database server's clock.
		`CREATE TABLE pgscale_agent_steps (
			run_id BIGINT NOT NULL REFERENCES pgscale_agent_runs (id) ON DELETE CASCADE,
			step INTEGER NOT NULL,
			plan JSONB NOT NULL,
			state TEXT NOT NULL,
			start_at TIMESTAMPTZ,
			PRIMARY KEY (run_id, step))`,
		// What an agent measured in a step: one row per interval as it
		// ends (counts and an HDR histogram), and its final report.
		`CREATE TABLE pgscale_agent_intervals (
			run_id BIGINT NOT NULL,
			step INTEGER NOT NULL,
			idx INTEGER NOT NULL,
			seq INTEGER NOT NULL,
			body JSONB NOT NULL,
			PRIMARY KEY (run_id, step, idx, seq),
			FOREIGN KEY (run_id, step) REFERENCES pgscale_agent_steps (run_id, step) ON DELETE CASCADE)`,
		`CREATE TABLE pgscale_agent_reports (
			run_id BIGINT NOT NULL,
			step INTEGER NOT NULL,
			idx INTEGER NOT NULL,
			body JSONB NOT NULL,
			PRIMARY KEY (run_id, step, idx),
			FOREIGN KEY (run_id, step) REFERENCES pgscale_agent_steps (run_id, step) ON DELETE CASCADE)`,
	}},
}

// SchemaVersion is the coordination schema's version this pgscale writes.
const SchemaVersion = 1

// ErrNewerSchema is returned (wrapped) for a coordination database whose
// schema a newer pgscale made.
var ErrNewerSchema = errors.New("coordination database made by a newer pgscale")

// schema is the coordination schema, migrated as the history store's is.
var schema = migrate.Schema{Table: "pgscale_agent_schema_version", Migrations: migrations, Newer: ErrNewerSchema}

// migrateSchema brings the coordination schema to SchemaVersion in one
// transaction, or refuses a newer schema.
func migrateSchema(ctx context.Context, conn *pgx.Conn) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error { return schema.Apply(ctx, pgxTx{tx}, true) })
}

// pgxTx is a pgx transaction as the migrator runs statements in it.
type pgxTx struct{ tx pgx.Tx }

func (t pgxTx) Exec(ctx context.Context, stmt string, args ...any) error {
	_, err := t.tx.Exec(ctx, stmt, args...)
	return err
}

func (t pgxTx) QueryInt(ctx context.Context, query string) (int, bool, error) {
	var v int
	err := t.tx.QueryRow(ctx, query).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return v, err == nil, err
}
