package workload

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/sync/errgroup"
)

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
