package migrate_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/pgscale/pgscale/internal/migrate"
)

// apply migrates the SQLite database db to schema in one transaction.
func apply(t *testing.T, db *sql.DB, schema migrate.Schema) error {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := schema.Apply(ctx, migrate.SQL(tx), false); err != nil {
		return err
	}
	return tx.Commit()
}

func version(t *testing.T, db *sql.DB) int {
	t.Helper()
	var v int
	if err := db.QueryRow(`SELECT version FROM test_schema_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A new database gets every migration; an older one the ones it lacks; a
// failing migration leaves the schema as it was; a newer one is refused
// with the schema's own error.
func TestApply(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	errNewer := errors.New("made by a newer test")
	v1 := migrate.Schema{Table: "test_schema_version", Newer: errNewer, Rewrite: func(s string) string { return strings.ReplaceAll(s, "{id}", "INTEGER PRIMARY KEY") },
		Migrations: []migrate.Migration{{Version: 1, Stmts: []string{`CREATE TABLE a (id {id})`}}}}
	if err := apply(t, db, v1); err != nil {
		t.Fatal(err)
	}
	if err := apply(t, db, v1); err != nil || version(t, db) != 1 {
		t.Fatalf("again: %v, version %d", err, version(t, db))
	}
	bad := v1
	bad.Migrations = append(append([]migrate.Migration{}, v1.Migrations...), migrate.Migration{Version: 2, Stmts: []string{`CREATE TABLE b (x INTEGER)`, `NOT SQL`}})
	if err := apply(t, db, bad); err == nil || !strings.Contains(err.Error(), "migration to schema version 2") {
		t.Errorf("a failing migration: %v", err)
	}
	var n int
	if db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'b'`).Scan(&n); n != 0 || version(t, db) != 1 {
		t.Errorf("after a failing migration: table b %d, version %d; want it rolled back", n, version(t, db))
	}
	v2 := v1
	v2.Migrations = append(append([]migrate.Migration{}, v1.Migrations...), migrate.Migration{Version: 2, Stmts: []string{`CREATE TABLE b (id {id})`}})
	if err := apply(t, db, v2); err != nil || version(t, db) != 2 || v2.Latest() != 2 {
		t.Fatalf("to version 2: %v, version %d", err, version(t, db))
	}
	err = apply(t, db, v1)
	if !errors.Is(err, errNewer) || !strings.Contains(err.Error(), "its schema is version 2, this pgscale knows up to 1") {
		t.Errorf("a newer schema: %v", err)
	}
}
