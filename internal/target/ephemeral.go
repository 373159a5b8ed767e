package target

import (
	"context"
	"fmt"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// clusterStart starts an ephemeral cluster: the start of every kind whose
// target is a cluster from server binaries (bin:, settings:), found or
// built by the kind's plan.
type clusterStart struct {
	spec     Spec
	bin      string    // the server binaries
	settings []Setting // the target's own, after --set
	opt      ClusterOptions
	// record, when set, adds what the kind knows of the server to the
	// result file's target record (a build's revision and options).
	record func(*result.Target)
}

func (*clusterStart) frontConnections() int { return 0 }

func (c *clusterStart) start(ctx context.Context, _ []*Server, needs Needs, log func(string)) (*Server, error) {
	srv, err := startCluster(ctx, c.spec, c.bin, c.settings, c.opt, needs, log)
	if err == nil && c.record != nil {
		c.record(&srv.Info)
	}
	return srv, err
}

// clusterConnections is the client connections an ephemeral cluster is
// sized for (max_connections, DefaultSettings) to meet needs.
func clusterConnections(needs Needs) int { return needs.Connections + 10 }

// commonSettings are the settings every ephemeral cluster of a run gets
// before its own: pgscale's defaults as c (the baseline's) got them, then
// --set.
func commonSettings(opt ClusterOptions, c *Cluster) ([]Setting, error) {
	out := DefaultSettings(c.opts.DataSizeHint, c.opts.MaxConnections, c.Preloaded)
	for _, s := range opt.Settings {
		st, err := ParseSetting(s)
		if err != nil {
			return nil, usage.Errorf("--set: %v", err)
		}
		out = append(out, st)
	}
	return out, nil
}

// startCluster starts an ephemeral cluster from the binaries in bin, with
// the --set settings and then the target's own, sized for needs.
func startCluster(ctx context.Context, spec Spec, bin string, own []Setting, opt ClusterOptions, needs Needs, log func(string)) (*Server, error) {
	var settings []Setting
	if opt.Valgrind != nil {
		settings = CountingSettings()
	}
	for _, s := range opt.Settings {
		st, err := ParseSetting(s)
		if err != nil {
			return nil, usage.Errorf("--set: %v", err)
		}
		settings = append(settings, st)
	}
	settings = append(settings, own...)
	log(fmt.Sprintf("starting an ephemeral PostgreSQL cluster from %s...", bin))
	c, err := Start(ctx, Options{BinDir: bin, Tmpfs: opt.Tmpfs, TCP: opt.TCP, Settings: settings, OSUser: opt.OSUser, HBA: opt.HBA,
		DataSizeHint: needs.DataBytes, MaxConnections: needs.Connections + 10, Detach: opt.Keep, Valgrind: opt.Valgrind})
	if err != nil {
		if c != nil {
			c.Stop()
		}
		return nil, named(spec, fmt.Errorf("ephemeral cluster: %w", err))
	}
	dsn := c.ConnString("postgres")
	if opt.TCP {
		dsn = c.TCPConnString("postgres")
	}
	cfg, err := ParseDSN(dsn)
	if err != nil {
		c.Stop()
		return nil, err
	}
	srv := &Server{Config: cfg, Cluster: c, keep: opt.Keep, log: log,
		Info: result.Target{
			Kind: "ephemeral", Name: spec.Name, Description: Describe(cfg), BinDir: bin, Preloaded: c.Preloaded, Tmpfs: opt.Tmpfs,
		}}
	if opt.Valgrind != nil {
		srv.Info.Valgrind = opt.Valgrind.info()
	}
	return srv, nil
}
