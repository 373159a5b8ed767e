package workload

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/sync/errgroup"
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
	NoVacuum        bool
	ForeignKeys     bool
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
	return nil
}

// DataBytes estimates the size of the data set on disk, for sizing
// shared_buffers: about 15 MB per unit of scale with indexes.
func DataBytes(scale int) int64 { return int64(scale) * 15 << 20 }

// Timing is how long each init phase took, like pgbench -i's last line.
type Timing struct {
	Drop, Create, Generate, Vacuum, Keys, Total time.Duration
}

func (t Timing) String() string {
	s := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	return fmt.Sprintf("done in %s (drop tables %s, create tables %s, generate %s, vacuum %s, primary keys %s)",
		s(t.Total), s(t.Drop), s(t.Create), s(t.Generate), s(t.Vacuum), s(t.Keys))
}

// Connector opens a new connection to the target database; Init uses
// several to load partitions in parallel.
type Connector func(ctx context.Context) (*pgconn.PgConn, error)

// Init creates pgbench's tables and data, exactly as pgbench -i does (same
// DDL, same rows), so either tool can run on data made by the other. It
// writes pgbench-like progress lines to log.
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
	begin := time.Now()
	phase := func(d *time.Duration, msg string, f func() error) error {
		fmt.Fprintln(log, msg)
		t0 := time.Now()
		err := f()
		*d = time.Since(t0)
		return err
	}
	exec := func(sql string) error { return execSQL(ctx, conn, sql) }
	if err := phase(&t.Drop, "dropping old tables...", func() error {
		return exec("DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers")
	}); err != nil {
		return t, err
	}
	if err := phase(&t.Create, "creating tables...", func() error {
		for _, sql := range createStatements(opts) {
			if err := exec(sql); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return t, err
	}
	if err := phase(&t.Generate, "generating data (binary COPY)...", func() error {
		return generate(ctx, conn, connect, opts)
	}); err != nil {
		return t, err
	}
	if !opts.NoVacuum {
		if err := phase(&t.Vacuum, "vacuuming...", func() error {
			return exec("VACUUM ANALYZE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history")
		}); err != nil {
			return t, err
		}
	}
	if err := phase(&t.Keys, "creating primary keys...", func() error {
		for _, sql := range []string{
			"ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid)",
			"ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid)",
			"ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid)",
		} {
			if err := exec(sql); err != nil {
				return err
			}
		}
		if opts.ForeignKeys {
			for _, sql := range []string{
				"ALTER TABLE pgbench_tellers ADD CONSTRAINT pgbench_tellers_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches",
				"ALTER TABLE pgbench_accounts ADD CONSTRAINT pgbench_accounts_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches",
				"ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_bid_fkey FOREIGN KEY (bid) REFERENCES pgbench_branches",
				"ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_tid_fkey FOREIGN KEY (tid) REFERENCES pgbench_tellers",
				"ALTER TABLE pgbench_history ADD CONSTRAINT pgbench_history_aid_fkey FOREIGN KEY (aid) REFERENCES pgbench_accounts",
			} {
				if err := exec(sql); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		return t, err
	}
	t.Total = time.Since(begin)
	fmt.Fprintln(log, t)
	return t, nil
}

func firstWords(sql string) string {
	f := strings.Fields(sql)
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Join(f, " ")
}

// createStatements returns pgbench's DDL for opts.
func createStatements(o InitOptions) []string {
	big := o.Scale >= BigintScale
	aidType := "int"
	if big {
		aidType = "bigint"
	}
	tables := []struct {
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
	var out []string
	for _, t := range tables {
		sql := create + t.name + "(" + t.cols + ")"
		if o.Partitions > 0 && t.name == "pgbench_accounts" {
			sql += " partition by " + o.PartitionMethod + " (aid)"
		} else if t.fill {
			sql += fmt.Sprintf(" with (fillfactor=%d)", o.Fillfactor)
		}
		out = append(out, sql)
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
		out = append(out, sql)
	}
	return out
}

// generate loads the rows. pgbench_accounts dominates: it is sent as binary
// COPY with FREEZE (no text parsing on the server, no later hint-bit or
// visibility-map work for vacuum). Range partitions are loaded by two
// connections in parallel, each partition truncated and frozen in its own
// transaction; hash partitions go through the parent (the server routes
// rows, and FREEZE is not allowed on a partitioned table).
func generate(ctx context.Context, conn *pgconn.PgConn, connect Connector, o InitOptions) error {
	big := o.Scale >= BigintScale
	n := int64(o.Scale)
	accounts := n * AccountsPerScale
	err := inTransaction(ctx, conn, func() error {
		if err := execSQL(ctx, conn, "TRUNCATE TABLE pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers"); err != nil {
			return err
		}
		if err := copyRows(ctx, conn, "pgbench_branches", true, newBranches(n*BranchesPerScale)); err != nil {
			return err
		}
		if err := copyRows(ctx, conn, "pgbench_tellers", true, newTellers(n*TellersPerScale)); err != nil {
			return err
		}
		switch {
		case o.Partitions == 0:
			return copyRows(ctx, conn, "pgbench_accounts", true, newAccounts(1, accounts, big))
		case o.PartitionMethod == "hash":
			return copyRows(ctx, conn, "pgbench_accounts", false, newAccounts(1, accounts, big))
		}
		return nil
	})
	if err != nil || o.Partitions == 0 || o.PartitionMethod == "hash" {
		return err
	}
	next := make(chan int, o.Partitions)
	for p := 1; p <= o.Partitions; p++ {
		next <- p
	}
	close(next)
	part := (accounts + int64(o.Partitions) - 1) / int64(o.Partitions)
	g, gctx := errgroup.WithContext(ctx)
	for w := 0; w < 2; w++ {
		g.Go(func() error {
			c, err := connect(gctx)
			if err != nil {
				return err
			}
			defer c.Close(context.Background())
			for p := range next {
				table := fmt.Sprintf("pgbench_accounts_%d", p)
				rows := newAccounts(int64(p-1)*part+1, min(int64(p)*part, accounts), big)
				if err := inTransaction(gctx, c, func() error {
					if err := execSQL(gctx, c, "TRUNCATE TABLE "+table); err != nil {
						return err
					}
					return copyRows(gctx, c, table, true, rows)
				}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
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

func copyRows(ctx context.Context, c *pgconn.PgConn, table string, freeze bool, rows *rowGen) error {
	opts := "FORMAT binary"
	if freeze {
		opts += ", FREEZE"
	}
	if _, err := c.CopyFrom(ctx, rows, "COPY "+table+" FROM STDIN ("+opts+")"); err != nil {
		return fmt.Errorf("copy %s: %w", table, err)
	}
	return nil
}

// rowGen is an io.Reader producing pgbench rows in COPY binary format,
// generated on demand into the caller's buffer.
type rowGen struct {
	next     int64 // next row number
	last     int64
	row      func(dst []byte, i int64) []byte
	buf      []byte
	headerOK bool
	trailed  bool
}

var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

func (g *rowGen) Read(p []byte) (int, error) {
	for len(g.buf) < len(p) && !g.trailed {
		if !g.headerOK {
			g.buf = append(g.buf, copyHeader...)
			g.headerOK = true
			continue
		}
		if g.next > g.last {
			g.buf = append(g.buf, 0xff, 0xff)
			g.trailed = true
			break
		}
		g.buf = g.row(g.buf, g.next)
		g.next++
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.buf)
	g.buf = g.buf[:copy(g.buf, g.buf[n:])]
	return n, nil
}

func appendInt4(b []byte, v int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 4)
	return binary.BigEndian.AppendUint32(b, uint32(int32(v)))
}

func appendInt8(b []byte, v int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

// appendEmpty appends an empty string, which char(n) pads with spaces, as pgbench's empty filler is.
func appendEmpty(b []byte) []byte { return binary.BigEndian.AppendUint32(b, 0) }

func fields(b []byte, n int) []byte { return binary.BigEndian.AppendUint16(b, uint16(n)) }

func newBranches(n int64) *rowGen {
	return &rowGen{next: 1, last: n, row: func(b []byte, i int64) []byte {
		b = fields(b, 3)
		b = appendInt4(b, i)
		b = appendInt4(b, 0)
		return appendNull(b)
	}}
}

func newTellers(n int64) *rowGen {
	return &rowGen{next: 1, last: n, row: func(b []byte, i int64) []byte {
		b = fields(b, 4)
		b = appendInt4(b, i)
		b = appendInt4(b, (i-1)/TellersPerScale+1)
		b = appendInt4(b, 0)
		return appendNull(b)
	}}
}

func newAccounts(first, last int64, big bool) *rowGen {
	aid := appendInt4
	if big {
		aid = appendInt8
	}
	return &rowGen{next: first, last: last, row: func(b []byte, i int64) []byte {
		b = fields(b, 4)
		b = aid(b, i)
		b = appendInt4(b, (i-1)/AccountsPerScale+1)
		b = appendInt4(b, 0)
		return appendEmpty(b)
	}}
}

// appendNull appends NULL: pgbench leaves the branches' and tellers' filler NULL.
func appendNull(b []byte) []byte { return binary.BigEndian.AppendUint32(b, 0xffffffff) }
