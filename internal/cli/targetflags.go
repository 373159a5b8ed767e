package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/target"
)

// targetFlags say where the server is: --dsn, or an ephemeral cluster.
type targetFlags struct {
	dsn    string
	pgBin  string
	tmpfs  bool
	tcp    bool
	keep   bool
	osUser string
	sets   []string
}

func (t *targetFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&t.dsn, "dsn", "", "connection string of an existing server (URI or keyword form); libpq environment variables are honoured; without it, an ephemeral cluster")
	t.registerEphemeral(fs)
}

// registerEphemeral registers the flags that shape ephemeral clusters.
func (t *targetFlags) registerEphemeral(fs *pflag.FlagSet) {
	fs.StringVar(&t.pgBin, "pg-bin", "", "server binaries for the ephemeral cluster (default: $PGSCALE_PG_BIN, pg_config --bindir, newest /usr/lib/postgresql/*/bin, PATH)")
	fs.BoolVar(&t.tmpfs, "tmpfs", false, "ephemeral cluster: data directory under /dev/shm")
	fs.BoolVar(&t.tcp, "tcp", false, "ephemeral cluster: also listen on 127.0.0.1 (free port), and connect clients over TCP")
	fs.BoolVar(&t.keep, "keep", false, "ephemeral cluster: keep it running at the end and print how to connect")
	fs.StringVar(&t.osUser, "os-user", "postgres", "ephemeral cluster: OS user that runs the server when pgscale runs as root")
	fs.StringArrayVar(&t.sets, "set", nil, "ephemeral cluster: server setting name=value (repeatable)")
}

func (t *targetFlags) ephemeral() bool { return t.dsn == "" && !target.EnvPointsAtServer() }

func (t *targetFlags) validate() error {
	if !t.ephemeral() && (t.pgBin != "" || t.tmpfs || t.tcp || t.keep || len(t.sets) > 0) {
		return Usagef("--pg-bin, --tmpfs, --tcp, --keep and --set apply to an ephemeral cluster, not to --dsn or a PGHOST-style environment")
	}
	for _, s := range t.sets {
		if _, err := target.ParseSetting(s); err != nil {
			return Usagef("--set: %v", err)
		}
	}
	return nil
}

// openTarget is a server ready for connections.
type openTarget struct {
	Config  *pgconn.Config
	Cluster *target.Cluster // nil for --dsn
	Info    result.Target
	keep    bool
	log     io.Writer
}

// open connects to --dsn or starts an ephemeral cluster sized for the run.
func (t *targetFlags) open(ctx context.Context, dataBytes int64, maxClients int, log io.Writer) (*openTarget, error) {
	if !t.ephemeral() {
		return openDSN(t.dsn, log)
	}
	bin, err := target.FindBinDir(t.pgBin)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return t.startCluster(ctx, bin, nil, dataBytes, maxClients, log)
}

// openDSN names an existing server; nothing is connected yet.
func openDSN(dsn string, log io.Writer) (*openTarget, error) {
	cfg, err := target.ParseDSN(dsn)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return &openTarget{Config: cfg, Info: result.Target{Kind: "dsn", Description: target.Describe(cfg)}, log: log}, nil
}

// startCluster starts an ephemeral cluster from the binaries in bin, with
// the --set settings and then extra, sized for the run.
func (t *targetFlags) startCluster(ctx context.Context, bin string, extra []target.Setting, dataBytes int64, maxClients int, log io.Writer) (*openTarget, error) {
	var settings []target.Setting
	for _, s := range t.sets {
		st, _ := target.ParseSetting(s)
		settings = append(settings, st)
	}
	settings = append(settings, extra...)
	fmt.Fprintf(log, "starting an ephemeral PostgreSQL cluster from %s...\n", bin)
	c, err := target.Start(ctx, target.Options{BinDir: bin, Tmpfs: t.tmpfs, TCP: t.tcp, Settings: settings,
		OSUser: t.osUser, DataSizeHint: dataBytes, MaxConnections: maxClients + 10, Detach: t.keep})
	if err != nil {
		if c != nil {
			c.Stop()
		}
		return nil, &IncompleteError{Err: fmt.Errorf("ephemeral cluster: %w", err)}
	}
	dsn := c.ConnString("postgres")
	if t.tcp {
		dsn = c.TCPConnString("postgres")
	}
	cfg, err := target.ParseDSN(dsn)
	if err != nil {
		c.Stop()
		return nil, err
	}
	return &openTarget{Config: cfg, Cluster: c, keep: t.keep, log: log, Info: result.Target{
		Kind: "ephemeral", Description: target.Describe(cfg), BinDir: bin, Preloaded: c.Preloaded, Tmpfs: t.tmpfs,
	}}, nil
}

// Connect opens one connection, with errors classified and passwords kept out.
func (o *openTarget) Connect(ctx context.Context) (*pgconn.PgConn, error) {
	conn, err := pgconn.ConnectConfig(ctx, o.Config)
	if err != nil {
		return nil, connectFailure(o.Config, err)
	}
	return conn, nil
}

func connectFailure(cfg *pgconn.Config, err error) error {
	err = target.ClassifyConnectError(cfg, err)
	if ce, ok := err.(*target.ConnectError); ok && ce.Usage {
		return &UsageError{Err: err}
	}
	return &IncompleteError{Err: err}
}

// Close stops an ephemeral cluster (or, with --keep, says how to reach it).
func (o *openTarget) Close() {
	if o.Cluster == nil {
		return
	}
	if o.keep {
		fmt.Fprintf(o.log, "keeping the cluster: psql %q   (stop it: kill %d; then rm -rf %s)\n",
			o.Cluster.ConnString("postgres"), o.Cluster.PID(), o.Cluster.Dir)
		return
	}
	if err := o.Cluster.Stop(); err != nil {
		fmt.Fprintf(o.log, "warning: removing the ephemeral cluster: %v\n", err)
	}
}

// redactArgs returns argv with passwords redacted, for result files.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = secret.Redact(a)
	}
	return out
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
