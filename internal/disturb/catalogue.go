package disturb

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/workload"
)

// ArgKind says what a built-in disturbance's optional argument (NAME=ARG) is.
type ArgKind int

// The kinds of argument a built-in disturbance takes.
const (
	NoArg     ArgKind = iota // takes none
	TableArg                 // a table name; by default the biggest table of the database
	PeriodArg                // a pause between iterations (10s, 500ms, or bare seconds)
)

// Builtin is a built-in disturbance: a script in pgbench's language that
// sessions of its own run in a loop beside the workload, during a window.
// Scripts are sent with the simple query protocol, so :table can stand for
// an identifier.
type Builtin struct {
	Name string
	// Stresses says what the disturbance stresses in the server, and so
	// what a drop in throughput while it runs points at.
	Stresses string
	// Script is what each session runs, once per iteration.
	Script string
	// Hold makes each session run Script once and then keep its session,
	// and the transaction Script left open, until the window ends; the
	// transaction is then rolled back.
	Hold bool
	// Arg is the kind of the optional argument; Var is the script
	// variable it sets, Default its value when none is given (empty for
	// TableArg: the biggest table), ArgDoc what it means.
	Arg     ArgKind
	Var     string
	Default string
	ArgDoc  string
}

// The built-in disturbances; every one runs in autocommit mode, so each
// statement commits on its own unless the script says BEGIN.
var builtins = []Builtin{
	{
		Name: "ddl-churn",
		Stresses: "the system catalogs and the shared invalidation queue: each iteration creates and drops a temporary table " +
			"with a bigserial primary key and a text column (a table, a sequence, an index and a TOAST table, each statement " +
			"committing), and every commit queues invalidation messages that every other backend must read before its next " +
			"query — the loop of the shared-invalidation spinlock thread",
		Script: `CREATE TEMPORARY TABLE pgscale_ddl_churn (id bigserial PRIMARY KEY, payload text);
DROP TABLE pgscale_ddl_churn;
`,
	},
	{
		Name: "checkpoint",
		Stresses: "I/O and WAL: each CHECKPOINT writes every dirty shared buffer and fsyncs, and the first change to each " +
			"page after it writes a full-page image into WAL, so write workloads slow down and their WAL volume jumps",
		Script: `CHECKPOINT;
\sleep :every_us us
`,
		Arg: PeriodArg, Var: "every_us", Default: "5s",
		ArgDoc: "pause after each CHECKPOINT (default 5s)",
	},
	{
		Name: "vacuum",
		Stresses: "I/O, the buffer cache and vacuum's locks: VACUUM scans the table and all its indexes through a small " +
			"ring of buffers, competes for the disk and the CPU, and takes a lock that conflicts with other vacuums and DDL",
		Script: `VACUUM :table;
`,
		Arg: TableArg, Var: "table",
		ArgDoc: "table to vacuum (default: the biggest table of the database)",
	},
	{
		Name: "long-txn",
		Stresses: "MVCC cleanup: one transaction keeps a snapshot and a transaction id open, so no vacuum or page " +
			"pruning can remove row versions that died after it began; updated tables and their indexes bloat and " +
			"index scans visit more dead entries for as long as it is open (read-only workloads barely notice)",
		Script: `BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT txid_current();
`,
		Hold: true,
	},
	{
		Name: "analyze",
		Stresses: "statistics and the relation cache: ANALYZE samples the table, rewrites its pg_statistic rows and sends " +
			"a relation cache invalidation, so every backend rebuilds its entry for the table and re-plans the " +
			"statements prepared on it",
		Script: `ANALYZE :table;
`,
		Arg: TableArg, Var: "table",
		ArgDoc: "table to analyze (default: the biggest table of the database)",
	},
}

// Builtins lists the built-in disturbances, sorted by name.
func Builtins() []Builtin {
	out := append([]Builtin(nil), builtins...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Find returns the built-in disturbance called name.
func Find(name string) (Builtin, error) {
	var names []string
	for _, d := range Builtins() {
		if d.Name == name {
			return d, nil
		}
		names = append(names, d.Name)
	}
	return Builtin{}, fmt.Errorf("no built-in disturbance %q (have %s)", name, strings.Join(names, ", "))
}

// tableName is what a table argument may look like: an identifier, quoted
// or not, optionally schema-qualified. No spaces or semicolons: it is
// substituted into SQL text.
var tableName = regexp.MustCompile(`^("[^"]+"|[A-Za-z_][A-Za-z0-9_$]*)(\.("[^"]+"|[A-Za-z_][A-Za-z0-9_$]*))?$`)

// CheckArg reports whether arg (empty for the default) is acceptable,
// without looking at a database.
func (d Builtin) CheckArg(arg string) error {
	if arg == "" {
		return nil
	}
	switch d.Arg {
	case NoArg:
		return fmt.Errorf("%s takes no argument (got =%s)", d.Name, arg)
	case TableArg:
		if !tableName.MatchString(arg) {
			return fmt.Errorf("%s=%s: not a table name ([schema.]table, quoted as in SQL when needed)", d.Name, arg)
		}
	case PeriodArg:
		if _, err := parsePeriod(arg); err != nil {
			return fmt.Errorf("%s=%s: %v", d.Name, arg, err)
		}
	}
	return nil
}

// Vars returns the script variables for arg (empty for the default). With
// TableArg and no arg it asks conn for the biggest table.
func (d Builtin) Vars(ctx context.Context, conn *pgconn.PgConn, arg string) (map[string]string, error) {
	if err := d.CheckArg(arg); err != nil {
		return nil, err
	}
	switch d.Arg {
	case TableArg:
		if arg == "" {
			t, err := workload.BiggestTable(ctx, conn)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", d.Name, err)
			}
			arg = t
		}
		return map[string]string{d.Var: arg}, nil
	case PeriodArg:
		if arg == "" {
			arg = d.Default
		}
		p, err := parsePeriod(arg)
		if err != nil {
			return nil, err
		}
		return map[string]string{d.Var: strconv.FormatInt(p.Microseconds(), 10)}, nil
	}
	return nil, nil
}

// parsePeriod parses 10s, 500ms, 1m or a bare number of seconds; the
// result must fit pgbench's \sleep (a C int of microseconds).
func parsePeriod(s string) (time.Duration, error) {
	var d time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		d = time.Duration(f * float64(time.Second))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("%q is not a duration (5s, 500ms, 1m)", s)
	}
	if d <= 0 || d.Microseconds() > 1<<31-1 {
		return 0, fmt.Errorf("%q: the pause must be positive and under 35 minutes", s)
	}
	return d, nil
}
