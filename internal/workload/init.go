package workload

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Rows per unit of scale, as in pgbench.
const (
	BranchesPerScale = 1
	TellersPerScale  = 10
	AccountsPerScale = 100000
	// BigintScale is the scale from which account ids need bigint (pgbench's SCALE_32BIT_THRESHOLD).
	BigintScale = 20000
)

// InitOptions are pgbench -i's options.
type InitOptions struct {
	Scale           int
	Partitions      int    // 0: pgbench_accounts is not partitioned
	PartitionMethod string // "range" (default) or "hash"
	Fillfactor      int    // 10..100, default 100
	Unlogged        bool
	NoVacuum        bool // -n: the steps lose their v
	ForeignKeys     bool // --foreign-keys: the steps gain an f
	// Steps is pgbench's -I: the initialization steps in order, from
	// DefaultSteps' letters and spaces; empty means DefaultSteps.
	Steps string
	// Tablespace and IndexTablespace are pgbench's --tablespace and
	// --index-tablespace: where the tables and primary key indexes go.
	Tablespace, IndexTablespace string
	// Quiet is pgbench's -q: a progress line every 5 seconds instead of
	// every 100 000 rows.
	Quiet bool
}

// The initialization steps (pgbench's -I letters).
const (
	// AllSteps are the letters -I accepts: drop, create tables, generate
	// on the client, generate on the server, vacuum, primary keys,
	// foreign keys.
	AllSteps = "dtgGvpf"
	// DefaultSteps is -I's default.
	DefaultSteps = "dtgvp"
)

// CheckSteps finds what pgbench refuses in an -I argument; the error is
// pgbench's message.
func CheckSteps(steps string) error {
	if steps == "" {
		return fmt.Errorf("no initialization steps specified")
	}
	for i := 0; i < len(steps); i++ {
		if !strings.ContainsRune(AllSteps+" ", rune(steps[i])) {
			return fmt.Errorf("unrecognized initialization step \"%c\"", steps[i])
		}
	}
	return nil
}

// steps returns the steps to run: -I's, less v with -n, plus f with
// --foreign-keys, as pgbench does.
func (o *InitOptions) steps() string {
	steps := o.Steps
	if steps == "" {
		steps = DefaultSteps
	}
	if o.NoVacuum {
		steps = strings.ReplaceAll(steps, "v", " ")
	}
	if o.ForeignKeys && !strings.Contains(steps, "f") {
		steps += "f"
	}
	return steps
}

func (o *InitOptions) normalize() error {
	if o.Scale == 0 {
		o.Scale = 1
	}
	if o.Fillfactor == 0 {
		o.Fillfactor = 100
	}
	if o.PartitionMethod == "" {
		o.PartitionMethod = "range"
	}
	switch {
	case o.Scale < 1:
		return fmt.Errorf("scale must be at least 1, got %d", o.Scale)
	case o.Fillfactor < 10 || o.Fillfactor > 100:
		return fmt.Errorf("fillfactor must be between 10 and 100, got %d", o.Fillfactor)
	case o.Partitions < 0:
		return fmt.Errorf("partitions must be at least 0, got %d", o.Partitions)
	case o.PartitionMethod != "range" && o.PartitionMethod != "hash":
		return fmt.Errorf("partition method must be range or hash, got %q", o.PartitionMethod)
	}
	return CheckSteps(o.steps())
}

// DataBytes estimates the size of the data set on disk, for sizing
// shared_buffers: about 15 MB per unit of scale with indexes.
func DataBytes(scale int) int64 { return int64(scale) * 15 << 20 }

// Timing is how long each init step took, as pgbench -i's last line
// says.
type Timing struct {
	Steps []StepTime
	Total time.Duration
}

// StepTime is one step's name in pgbench's words and its duration.
type StepTime struct {
	Op       string
	Duration time.Duration
}

// String is pgbench's last line: "done in 0.19 s (drop tables 0.00 s, ...)."
func (t Timing) String() string {
	parts := make([]string, len(t.Steps))
	for i, s := range t.Steps {
		parts[i] = fmt.Sprintf("%s %.2f s", s.Op, s.Duration.Seconds())
	}
	return fmt.Sprintf("done in %.2f s (%s).", t.Total.Seconds(), strings.Join(parts, ", "))
}

// Connector opens a new connection to the target database; Init uses
// several to load partitions in parallel.
type Connector func(ctx context.Context) (*pgconn.PgConn, error)

// Init creates pgbench's tables and data, exactly as pgbench -i does (same
// DDL, same rows), so either tool can run on data made by the other: the
// steps of -I in order, each announced on log in pgbench's words, and
// pgbench's last line.
func Init(ctx context.Context, connect Connector, opts InitOptions, log io.Writer) (Timing, error) {
	var t Timing
	if err := opts.normalize(); err != nil {
		return t, err
	}
	conn, err := connect(ctx)
	if err != nil {
		return t, err
	}
	defer conn.Close(context.Background())
	exec := func(sqls ...string) error {
		for _, sql := range sqls {
			if err := execSQL(ctx, conn, sql); err != nil {
				return err
			}
		}
		return nil
	}
	for _, step := range opts.steps() {
		var op string
		var run func() error
		switch step {
		case 'd':
			op = "drop tables"
			run = func() error {
				fmt.Fprintln(log, "dropping old tables...")
				return exec("drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers")
			}
		case 't':
			op = "create tables"
			run = func() error {
				fmt.Fprintln(log, "creating tables...")
				tables, parts := createStatements(opts, quoteIdent)
				if err := exec(tables...); err != nil {
					return err
				}
				if len(parts) > 0 {
					fmt.Fprintf(log, "creating %d partitions...\n", len(parts))
				}
				return exec(parts...)
			}
		case 'g':
			op = "client-side generate"
			run = func() error {
				fmt.Fprintln(log, "generating data (client-side)...")
				return generate(ctx, conn, connect, opts, log)
			}
		case 'G':
			op = "server-side generate"
			run = func() error {
				fmt.Fprintln(log, "generating data (server-side)...")
				return inTransaction(ctx, conn, func() error { return exec(serverSideGenerate(opts.Scale)...) })
			}
		case 'v':
			op = "vacuum"
			run = func() error {
				fmt.Fprintln(log, "vacuuming...")
				return exec("vacuum analyze pgbench_branches", "vacuum analyze pgbench_tellers",
					"vacuum analyze pgbench_accounts", "vacuum analyze pgbench_history")
			}
		case 'p':
			op = "primary keys"
			run = func() error {
				fmt.Fprintln(log, "creating primary keys...")
				return exec(primaryKeys(opts.IndexTablespace, quoteIdent)...)
			}
		case 'f':
			op = "foreign keys"
			run = func() error {
				fmt.Fprintln(log, "creating foreign keys...")
				return exec(foreignKeys...)
			}
		default: // a space
			continue
		}
		t0 := time.Now()
		err := run()
		d := time.Since(t0)
		if err != nil {
			return t, err
		}
		t.Steps = append(t.Steps, StepTime{op, d})
		t.Total += d
	}
	fmt.Fprintln(log, t)
	return t, nil
}

// quoteIdent quotes an identifier as libpq's PQescapeIdentifier does:
// always, doubling the double quotes inside.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

var foreignKeys = []string{
	"alter table pgbench_tellers add constraint pgbench_tellers_bid_fkey foreign key (bid) references pgbench_branches",
	"alter table pgbench_accounts add constraint pgbench_accounts_bid_fkey foreign key (bid) references pgbench_branches",
	"alter table pgbench_history add constraint pgbench_history_bid_fkey foreign key (bid) references pgbench_branches",
	"alter table pgbench_history add constraint pgbench_history_tid_fkey foreign key (tid) references pgbench_tellers",
	"alter table pgbench_history add constraint pgbench_history_aid_fkey foreign key (aid) references pgbench_accounts",
}

// primaryKeys is pgbench's p step, with --index-tablespace.
func primaryKeys(tablespace string, quote func(string) string) []string {
	out := []string{
		"alter table pgbench_branches add primary key (bid)",
		"alter table pgbench_tellers add primary key (tid)",
		"alter table pgbench_accounts add primary key (aid)",
	}
	if tablespace != "" {
		for i := range out {
			out[i] += " using index tablespace " + quote(tablespace)
		}
	}
	return out
}

// serverSideGenerate is pgbench's G step (in one transaction).
func serverSideGenerate(scale int) []string {
	return []string{
		"truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
		fmt.Sprintf("insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, %d) as bid", BranchesPerScale*scale),
		fmt.Sprintf("insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / %d + 1, 0 from generate_series(1, %d) as tid",
			TellersPerScale, TellersPerScale*scale),
		fmt.Sprintf("insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / %d + 1, 0, '' from generate_series(1, %d) as aid",
			AccountsPerScale, int64(AccountsPerScale)*int64(scale)),
	}
}

func firstWords(sql string) string {
	f := strings.Fields(sql)
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Join(f, " ")
}

// createStatements returns pgbench's DDL for opts: the tables, then the
// partitions of pgbench_accounts.
func createStatements(o InitOptions, quote func(string) string) (tables, partitions []string) {
	big := o.Scale >= BigintScale
	aidType := "int"
	if big {
		aidType = "bigint"
	}
	defs := []struct {
		name, cols string
		fill       bool
	}{
		{"pgbench_history", "tid int,bid int,aid " + aidType + ",delta int,mtime timestamp,filler char(22)", false},
		{"pgbench_tellers", "tid int not null,bid int,tbalance int,filler char(84)", true},
		{"pgbench_accounts", "aid " + aidType + " not null,bid int,abalance int,filler char(84)", true},
		{"pgbench_branches", "bid int not null,bbalance int,filler char(88)", true},
	}
	create := "create table "
	if o.Unlogged {
		create = "create unlogged table "
	}
	for _, t := range defs {
		sql := create + t.name + "(" + t.cols + ")"
		if o.Partitions > 0 && t.name == "pgbench_accounts" {
			sql += " partition by " + o.PartitionMethod + " (aid)"
		} else if t.fill {
			sql += fmt.Sprintf(" with (fillfactor=%d)", o.Fillfactor)
		}
		if o.Tablespace != "" {
			sql += " tablespace " + quote(o.Tablespace)
		}
		tables = append(tables, sql)
	}
	accounts := int64(o.Scale) * AccountsPerScale
	part := (accounts + int64(o.Partitions) - 1) / max(int64(o.Partitions), 1)
	for p := 1; p <= o.Partitions; p++ {
		sql := fmt.Sprintf("%spgbench_accounts_%d partition of pgbench_accounts for values ", create, p)
		if o.PartitionMethod == "range" {
			lo, hi := "minvalue", "maxvalue"
			if p > 1 {
				lo = fmt.Sprint(int64(p-1)*part + 1)
			}
			if p < o.Partitions {
				hi = fmt.Sprint(int64(p)*part + 1)
			}
			sql += fmt.Sprintf("from (%s) to (%s)", lo, hi)
		} else {
			sql += fmt.Sprintf("with (modulus %d, remainder %d)", o.Partitions, p-1)
		}
		sql += fmt.Sprintf(" with (fillfactor=%d)", o.Fillfactor)
		partitions = append(partitions, sql)
	}
	return tables, partitions
}

func execSQL(ctx context.Context, c *pgconn.PgConn, sql string) error {
	if err := c.Exec(ctx, sql).Close(); err != nil {
		return fmt.Errorf("%s: %w", firstWords(sql), err)
	}
	return nil
}

func inTransaction(ctx context.Context, c *pgconn.PgConn, f func() error) error {
	if err := execSQL(ctx, c, "BEGIN"); err != nil {
		return err
	}
	if err := f(); err != nil {
		_ = c.Exec(ctx, "ROLLBACK").Close()
		return err
	}
	return execSQL(ctx, c, "COMMIT")
}

func appendInt4(b []byte, v int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 4)
	return binary.BigEndian.AppendUint32(b, uint32(int32(v)))
}

func appendInt8(b []byte, v int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}
