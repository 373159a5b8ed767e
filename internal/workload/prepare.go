package workload

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/usage"
)

// Check finds what pgbench -i would refuse in o, as usage errors that
// say which option and why (OptionError), for the edge to name the
// option as the user gave it.
func (o InitOptions) Check() error {
	switch {
	case o.Scale < 1:
		return mustBe("Scale", "at least 1")
	case o.Fillfactor < 10 || o.Fillfactor > 100:
		return mustBe("Fillfactor", "between 10 and 100")
	case o.Partitions < 0:
		return mustBe("Partitions", "at least 0")
	case o.PartitionMethod != "range" && o.PartitionMethod != "hash":
		return mustBe("PartitionMethod", "range or hash")
	}
	if err := CheckSteps(o.steps()); err != nil {
		return optionError("Steps", err)
	}
	return nil
}

// PrepareOptions say how to make a target's data ready for a workload.
type PrepareOptions struct {
	// Create (re)creates pgbench's data with Init first: always on an
	// ephemeral cluster, on request (--init) on an existing server.
	Create bool
	Init   InitOptions
	// ScaleGiven says -s was given, so that a scale the data contradicts
	// is warned about.
	ScaleGiven bool
	// NeedTables refuses a database without pgbench's tables (the
	// built-in scripts use them), and takes the scale from the data, as
	// pgbench does when a built-in script runs; otherwise the scale is
	// Init.Scale (-s, default 1), as pgbench's :scale for custom scripts.
	// MakeTables says how the user makes them, in the words they do it
	// with, for the refusal to offer (empty: it offers nothing).
	NeedTables bool
	MakeTables string
	// Setup is SQL run once after the data is made (--setup), SetupName
	// what errors call it ("--setup FILE").
	Setup, SetupName string
	// Where names the target in errors.
	Where string
	// Log receives one-line notices.
	Log func(string)
}

// Prepared is what Prepare found or made.
type Prepared struct {
	// Scale is the data's scale, read from it as pgbench does (the number
	// of branches), or the asked-for one when the data has none.
	Scale int
	// Tables says pgbench's tables are there (vacuumed before each step).
	Tables bool
	// Partitions and PartitionMethod describe pgbench_accounts when the
	// scale was read from the data (pgbench reports them then): its
	// partitions and "range" or "hash", or 0 and "" when not partitioned.
	Partitions      int
	PartitionMethod string
}

// Prepare makes sure the data the workload needs is there: creates it
// when asked, refuses a database that lacks pgbench's tables when the
// workload needs them (a usage error offering MakeTables), runs the
// setup SQL, and reads the scale.
func Prepare(ctx context.Context, connect Connector, o PrepareOptions) (Prepared, error) {
	log := o.Log
	if log == nil {
		log = func(string) {}
	}
	conn, err := connect(ctx)
	if err != nil {
		return Prepared{}, err
	}
	defer conn.Close(context.Background())
	data, err := Inspect(ctx, conn)
	if err != nil {
		return Prepared{}, err
	}
	if o.Create {
		log(fmt.Sprintf("creating pgbench data, scale %d...", o.Init.Scale))
		if _, err := Init(ctx, connect, o.Init, io.Discard); err != nil {
			return Prepared{}, fmt.Errorf("init: %w", err)
		}
		if data, err = Inspect(ctx, conn); err != nil {
			return Prepared{}, err
		}
	} else if !data.Complete() && o.NeedTables {
		remedy := ""
		if o.MakeTables != "" {
			remedy = ": " + o.MakeTables
		}
		return Prepared{}, usage.Errorf("%s has no pgbench tables (missing %s)%s", o.Where, strings.Join(data.Missing, ", "), remedy)
	}
	if o.Setup != "" {
		if err := runSetup(ctx, conn, o, log); err != nil {
			return Prepared{}, err
		}
	}
	p := Prepared{Scale: o.Init.Scale, Tables: data.Complete()}
	if p.Scale == 0 {
		p.Scale = 1
	}
	if o.NeedTables && data.Complete() && data.Scale > 0 {
		if o.ScaleGiven && data.Scale != o.Init.Scale {
			log(fmt.Sprintf("warning: scale option ignored, using count from pgbench_branches table (%d)", data.Scale)) // pgbench's words
		}
		p.Scale, p.Partitions, p.PartitionMethod = data.Scale, data.Partitions, data.PartitionMethod
	}
	return p, nil
}

// VacuumAccounts is pgbench's -v: vacuum and analyze pgbench_accounts
// too before a run.
func VacuumAccounts(ctx context.Context, connect Connector) error {
	conn, err := connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := conn.Exec(ctx, "VACUUM ANALYZE pgbench_accounts").Close(); err != nil {
		return fmt.Errorf("VACUUM ANALYZE pgbench_accounts: %w", err)
	}
	return nil
}

// VacuumBeforeStep does what pgbench does before a run unless -n: vacuum
// the small tables and empty the history.
func VacuumBeforeStep(ctx context.Context, connect Connector) error {
	conn, err := connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, sql := range []string{"VACUUM pgbench_branches", "VACUUM pgbench_tellers", "TRUNCATE pgbench_history"} {
		if err := conn.Exec(ctx, sql).Close(); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// SetupProgressEvery is how often a set-up that is still running says so.
const SetupProgressEvery = 30 * time.Second

// runSetup runs the set-up SQL, saying that it does as it starts, every
// SetupProgressEvery while it runs, and how long it took when that was
// long enough to wonder.
func runSetup(ctx context.Context, conn *pgconn.PgConn, o PrepareOptions, log func(string)) error {
	name := o.SetupName
	if name == "" {
		name = "the set-up"
	}
	log(fmt.Sprintf("running %s...", name))
	start := time.Now()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(SetupProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				log(fmt.Sprintf("running %s (%s)...", name, time.Since(start).Round(time.Second)))
			}
		}
	}()
	err := conn.Exec(ctx, o.Setup).Close()
	close(done)
	if err != nil && ctx.Err() != nil {
		// Interrupted (Ctrl-C, a suite stopped): the run could not
		// complete, which is no fault of the SQL.
		return fmt.Errorf("%s: %w", name, ctx.Err())
	}
	if err != nil {
		return usage.Errorf("%s: %v", o.SetupName, err)
	}
	if took := time.Since(start); took >= SetupProgressEvery/6 {
		log(fmt.Sprintf("%s took %s", name, took.Round(time.Second)))
	}
	return nil
}
