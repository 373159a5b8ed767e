package store

import (
	"context"
	"fmt"

	"github.com/pgscale/pgscale/internal/migrate"
)

// LastMigration is the version the last migration brings a store to.
var LastMigration = migrations[len(migrations)-1].Version

// OpenNext opens a store as a pgscale one schema version newer than this
// one would: with an extra migration made of stmts.
func OpenNext(ctx context.Context, location string, stmts ...string) (*Store, error) {
	migs := append(append([]migrate.Migration{}, migrations...), migrate.Migration{Version: SchemaVersion + 1, Stmts: stmts})
	return open(ctx, location, migs, nil)
}

// StoredVersion reads the schema version the store records.
func (s *Store) StoredVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT version FROM pgscale_schema_version`).Scan(&v)
	return v, err
}

// Exec runs a statement on the store.
func (s *Store) Exec(ctx context.Context, stmt string, args ...any) error {
	_, err := s.db.ExecContext(ctx, stmt, args...)
	return err
}

// Rows counts the rows of a table of the store.
func (s *Store) Rows(ctx context.Context, table string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM %s`, table)).Scan(&n)
	return n, err
}

// OpenVersion opens a store as the pgscale whose last migration was to
// version v would.
func OpenVersion(ctx context.Context, location string, v int) (*Store, error) {
	return open(ctx, location, migrations[:v], nil)
}
