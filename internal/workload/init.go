package workload

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
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

// generate loads the rows. pgbench_accounts dominates: it is sent as binary
// COPY with FREEZE (no text parsing on the server, no later hint-bit or
// visibility-map work for vacuum). Range partitions are loaded by two
// connections in parallel, each partition truncated and frozen in its own
// transaction; hash partitions go through the parent (the server routes
// rows, and FREEZE is not allowed on a partitioned table). Progress goes
// to log as pgbench prints it, for the rows of each table.
func generate(ctx context.Context, conn *pgconn.PgConn, connect Connector, o InitOptions, log io.Writer) error {
	big := o.Scale >= BigintScale
	n := int64(o.Scale)
	accounts := n * AccountsPerScale
	acc := newProgress(log, "pgbench_accounts", accounts, o.Quiet)
	err := inTransaction(ctx, conn, func() error {
		if err := execSQL(ctx, conn, "TRUNCATE TABLE pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers"); err != nil {
			return err
		}
		if err := copyRows(ctx, conn, "pgbench_branches", true, newBranches(n*BranchesPerScale).counted(
			newProgress(log, "pgbench_branches", n*BranchesPerScale, o.Quiet))); err != nil {
			return err
		}
		if err := copyRows(ctx, conn, "pgbench_tellers", true, newTellers(n*TellersPerScale).counted(
			newProgress(log, "pgbench_tellers", n*TellersPerScale, o.Quiet))); err != nil {
			return err
		}
		switch {
		case o.Partitions == 0:
			return copyRows(ctx, conn, "pgbench_accounts", true, newAccounts(1, accounts, big).counted(acc))
		case o.PartitionMethod == "hash":
			return copyRows(ctx, conn, "pgbench_accounts", false, newAccounts(1, accounts, big).counted(acc))
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
				rows := newAccounts(int64(p-1)*part+1, min(int64(p)*part, accounts), big).counted(acc)
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

// progress prints pgbench -i's progress lines for one table: every
// 100 000 rows, or with quiet every 5 seconds and at the end. Several
// loaders of one table (partitions) may add to it at once.
type progress struct {
	mu       sync.Mutex
	log      io.Writer
	table    string
	total    int64
	done     int64
	quiet    bool
	start    time.Time
	interval int // pgbench's log_interval, in steps of 5 s
}

func newProgress(log io.Writer, table string, total int64, quiet bool) *progress {
	return &progress{log: log, table: table, total: total, quiet: quiet, start: time.Now(), interval: 1}
}

// add counts n more rows, n being at most 100 (rows are counted by the
// hundred, as pgbench looks at its clock).
func (p *progress) add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	before := p.done
	p.done += n
	j := p.done
	if !p.quiet {
		if j/100000 > before/100000 {
			p.print(j / 100000 * 100000)
		}
		return
	}
	if j%100 != 0 && j != p.total {
		return
	}
	elapsed := time.Since(p.start).Seconds()
	if j == p.total || elapsed >= float64(p.interval*5) {
		p.print(j)
		p.interval = int(math.Ceil(elapsed / 5))
	}
}

func (p *progress) print(j int64) {
	elapsed := time.Since(p.start).Seconds()
	remaining := float64(p.total-j) * elapsed / float64(j)
	fmt.Fprintf(p.log, "%d of %d tuples (%d%%) of %s done (elapsed %.2f s, remaining %.2f s)\n",
		j, p.total, j*100/p.total, p.table, elapsed, remaining)
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
	progress *progress // counts the rows generated, by the hundred
	uncount  int64     // rows not yet counted
}

// counted makes g count its rows into p.
func (g *rowGen) counted(p *progress) *rowGen {
	g.progress = p
	return g
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
			if g.progress != nil && g.uncount > 0 {
				g.progress.add(g.uncount)
				g.uncount = 0
			}
			break
		}
		g.buf = g.row(g.buf, g.next)
		g.next++
		if g.progress != nil {
			if g.uncount++; g.uncount == 100 {
				g.progress.add(100)
				g.uncount = 0
			}
		}
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
