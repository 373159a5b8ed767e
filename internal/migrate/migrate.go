// Package migrate brings a database schema of pgscale's (the history
// store's, the agents' coordination tables) to the version this pgscale
// writes: numbered migrations applied in one transaction, the version kept
// in a table of its own, a schema made by a newer pgscale refused. It
// knows no driver: each caller runs it in a transaction of its own (Tx;
// SQL adapts database/sql's).
package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Migration brings a schema from Version-1 to Version.
type Migration struct {
	Version int
	Stmts   []string
}

// Tx is the transaction a schema is migrated in, whichever driver opened
// it.
type Tx interface {
	// Exec runs one statement.
	Exec(ctx context.Context, stmt string, args ...any) error
	// QueryInt reads the integer a query's one row holds; found is false
	// when it returns no row.
	QueryInt(ctx context.Context, query string) (v int, found bool, err error)
}

// LockID is the PostgreSQL advisory lock every pgscale schema migrates
// under, so that two pgscales never migrate one database at once.
const LockID = 7468120119203

// Schema is one of pgscale's schemas: its version table and history.
type Schema struct {
	// Table holds the schema's version, in one row.
	Table string
	// Migrations are its history, oldest first; a release only ever
	// appends to it.
	Migrations []Migration
	// Newer is wrapped in the error for a schema a newer pgscale made.
	Newer error
	// Rewrite, when set, turns a statement as written into the
	// database's spelling (an auto-numbered key).
	Rewrite func(string) string
	// Explain, when set, turns the first statement's error into words a
	// user can act on (a file that is no database).
	Explain func(error) error
}

// Latest is the version the last migration brings the schema to.
func (s Schema) Latest() int { return s.Migrations[len(s.Migrations)-1].Version }

// Apply brings the schema to Latest in tx, or refuses one newer than
// that. On PostgreSQL (postgres) it first takes the advisory lock LockID
// for the transaction; elsewhere (SQLite) the transaction itself keeps
// other writers out.
func (s Schema) Apply(ctx context.Context, tx Tx, postgres bool) error {
	if postgres {
		if err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(LockID)); err != nil {
			return err
		}
	}
	if err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+s.Table+` (version INTEGER NOT NULL)`); err != nil {
		if s.Explain != nil {
			err = s.Explain(err)
		}
		return fmt.Errorf("cannot create the schema version table: %w", err)
	}
	v, found, err := tx.QueryInt(ctx, `SELECT version FROM `+s.Table)
	switch {
	case err != nil:
		return err
	case !found:
		if err := tx.Exec(ctx, `INSERT INTO `+s.Table+` (version) VALUES (0)`); err != nil {
			return err
		}
	}
	latest := s.Latest()
	if v > latest {
		newer := s.Newer
		if newer == nil {
			newer = errors.New("schema made by a newer pgscale")
		}
		return fmt.Errorf("%w: its schema is version %d, this pgscale knows up to %d; use a newer pgscale", newer, v, latest)
	}
	for _, m := range s.Migrations {
		if m.Version <= v {
			continue
		}
		for _, st := range m.Stmts {
			if s.Rewrite != nil {
				st = s.Rewrite(st)
			}
			if err := tx.Exec(ctx, st); err != nil {
				return fmt.Errorf("migration to schema version %d: %w", m.Version, err)
			}
		}
		v = m.Version
	}
	return tx.Exec(ctx, `UPDATE `+s.Table+` SET version = $1`, v)
}

// SQL is a database/sql transaction as the migrator runs statements in it.
func SQL(tx *sql.Tx) Tx { return sqlTx{tx} }

type sqlTx struct{ tx *sql.Tx }

func (t sqlTx) Exec(ctx context.Context, stmt string, args ...any) error {
	_, err := t.tx.ExecContext(ctx, stmt, args...)
	return err
}

func (t sqlTx) QueryInt(ctx context.Context, query string) (int, bool, error) {
	var v int
	err := t.tx.QueryRowContext(ctx, query).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return v, err == nil, err
}
