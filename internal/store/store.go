// Package store keeps pgscale's run history: every result file whole, and
// its figures indexed as points of series, so change detection can read a
// measure's history across commits. It is an embedded SQLite database by
// default (a pure-Go driver: no C toolchain) and PostgreSQL for teams, with
// one schema and versioned migrations for both (docs/history.md).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/migrate"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/secret"
)

// EnvLocation is the environment variable naming the store when the caller
// names none.
const EnvLocation = "PGSCALE_STORE"

// Kind is a store's backend.
type Kind string

// The backends.
const (
	SQLite   Kind = "sqlite"
	Postgres Kind = "postgres"
)

// Store is an open history store. Its methods are safe for concurrent use,
// and several processes may write to one store at once.
type Store struct {
	db       *sql.DB
	kind     Kind
	location string // redacted
	measures []compare.MeasureDef
}

// Open opens the store at location, creating it (and, for SQLite, its
// directory) when it does not exist and migrating it when an older pgscale
// made it. A store made by a newer pgscale is refused. location is a
// postgres:// or postgresql:// URL or a keyword/value connection string
// ("host=... dbname=...") for PostgreSQL, otherwise the path of an SQLite
// file; "" means DefaultLocation. Each result added is indexed by measures,
// DefaultMeasures() when none are given.
func Open(ctx context.Context, location string, measures ...compare.MeasureDef) (*Store, error) {
	return open(ctx, location, migrations, measures)
}

func open(ctx context.Context, location string, migs []migrate.Migration, measures []compare.MeasureDef) (*Store, error) {
	if location == "" {
		var err error
		if location, err = DefaultLocation(); err != nil {
			return nil, err
		}
	}
	if len(measures) == 0 {
		measures = DefaultMeasures()
	}
	s := &Store{kind: kindOf(location), location: secret.Redact(location), measures: measures}
	var err error
	switch s.kind {
	case Postgres:
		s.db, err = sql.Open("pgx", location)
	default:
		s.db, err = openSQLite(location)
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", s.location, lineError{err})
	}
	if err := s.migrate(ctx, migs); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("store %s: %w", s.location, lineError{err})
	}
	return s, nil
}

// DefaultMeasures are the measures indexed per step when Open is given
// none: those compare looks at (tps, p50, p99, client-cpu/txn).
func DefaultMeasures() []compare.MeasureDef { return compare.Measures() }

// openSQLite opens an SQLite file in WAL mode with a busy timeout, so
// concurrent writers wait for each other instead of failing, and with
// write transactions that take the write lock when they begin (a deferred
// one that reads first could not wait for it later).
func openSQLite(path string) (*sql.DB, error) {
	if strings.ContainsAny(path, "?#") {
		return nil, errors.New("an SQLite path may not hold '?' or '#'")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	dsn := path + "?_txlock=immediate&_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	return sql.Open("sqlite", dsn)
}

// DefaultLocation returns $PGSCALE_STORE when it is set, otherwise
// $XDG_DATA_HOME/pgscale/history.db, otherwise
// ~/.local/share/pgscale/history.db.
func DefaultLocation() (string, error) {
	if l := os.Getenv(EnvLocation); l != "" {
		return l, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "pgscale", "history.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no default store location: %w; set %s", err, EnvLocation)
	}
	return filepath.Join(home, ".local", "share", "pgscale", "history.db"), nil
}

// CheckWritable says, before a run spends its time, whether results can
// be recorded at location: for SQLite, that the file (or its directory,
// when it does not exist yet) can be written; a PostgreSQL store is only
// known when connected to, and what it cannot record is still on disk.
func CheckWritable(location string) error {
	if location == "" || kindOf(location) == Postgres {
		return nil
	}
	if err := result.CheckWritable(location); err != nil {
		return fmt.Errorf("store %s: %w", location, err)
	}
	if f, err := os.OpenFile(location, os.O_RDWR, 0); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store %s: %w", location, err)
	}
	return nil
}

// Kind returns the store's backend.
func (s *Store) Kind() Kind { return s.kind }

// Location returns where the store is, passwords redacted.
func (s *Store) Location() string { return s.location }

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

var keywordConnString = regexp.MustCompile(`^\s*(host|hostaddr|port|dbname|user|password|service|sslmode|application_name|connect_timeout|target_session_attrs)\s*=`)

// kindOf tells a PostgreSQL connection string from a file path.
func kindOf(location string) Kind {
	l := strings.ToLower(location)
	if strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://") || keywordConnString.MatchString(l) {
		return Postgres
	}
	return SQLite
}
