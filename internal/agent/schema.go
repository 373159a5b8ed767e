package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migration brings the coordination schema from version-1 to version.
type migration struct {
	version int
	stmts   []string
}

// migrations are the coordination schema's history, oldest first; a
// release only ever appends to it (docs/agents.md describes the tables).
// The tables live beside a history store's when the same database serves
// both, under names of their own.
var migrations = []migration{
	{1, []string{
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

// advisoryLock keeps two pgscales from migrating the schema at once.
const advisoryLock = 7468120119204

// migrate brings the schema to the last of migs in one transaction under an
// advisory lock, as the history store does, or refuses a newer schema.
func migrate(ctx context.Context, conn *pgx.Conn, migs []migration) error {
	latest := migs[len(migs)-1].version
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(advisoryLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS pgscale_agent_schema_version (version INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("cannot create the schema version table: %w", err)
		}
		var v int
		err := tx.QueryRow(ctx, `SELECT version FROM pgscale_agent_schema_version`).Scan(&v)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if _, err := tx.Exec(ctx, `INSERT INTO pgscale_agent_schema_version (version) VALUES (0)`); err != nil {
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
				if _, err := tx.Exec(ctx, st); err != nil {
					return fmt.Errorf("migration to schema version %d: %w", m.version, err)
				}
			}
			v = m.version
		}
		_, err = tx.Exec(ctx, `UPDATE pgscale_agent_schema_version SET version = $1`, v)
		return err
	})
}
