package target

import (
	"context"
	"errors"
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
	return c.cluster(ctx, needs, log, false)
}

// startEmpty makes the cluster as start does, but with no data and no
// server (Options.Empty): a copy of another's data is to be its data.
func (c *clusterStart) startEmpty(ctx context.Context, needs Needs, log func(string)) (*Server, error) {
	if c.spec.Replicas > 0 {
		return nil, named(c.spec, errors.New("a cluster with streaming replicas makes its data itself"))
	}
	return c.cluster(ctx, needs, log, true)
}

// cluster starts the cluster (or with empty only makes it) and what the
// kind adds: its record, its replicas.
func (c *clusterStart) cluster(ctx context.Context, needs Needs, log func(string), empty bool) (*Server, error) {
	srv, err := c.startCluster(ctx, needs, log, empty)
	if err == nil && c.record != nil {
		c.record(&srv.Info)
	}
	if err == nil && c.spec.Replicas > 0 {
		if srv.Replicas, err = replicaServers(ctx, srv, c.spec.Replicas, log); err != nil {
			srv.Close()
			return nil, named(c.spec, err)
		}
	}
	return srv, err
}

// clusterConnections is the client connections an ephemeral cluster is
// sized for (max_connections, DefaultSettings) to meet needs.
func clusterConnections(needs Needs) int { return needs.Connections + 10 }

// commonSettings are the settings every ephemeral cluster of a run gets
// before its own: pgscale's defaults as c (the baseline's) got them, then
// the run's (--set).
func commonSettings(opt ClusterOptions, c *Cluster) ([]Setting, error) {
	out := DefaultSettings(c.opts.DataSizeHint, c.opts.MaxConnections, c.Preloaded)
	for _, s := range opt.Settings {
		st, err := ParseSetting(s)
		if err != nil {
			return nil, usage.Wrap(err) // the edge checked them, in the words of its flag
		}
		out = append(out, st)
	}
	return out, nil
}

// startCluster starts an ephemeral cluster from the kind's binaries, with
// the --set settings and then the target's own, sized for needs; with
// empty it makes the cluster without data and starts nothing
// (Options.Empty).
func (cs *clusterStart) startCluster(ctx context.Context, needs Needs, log func(string), empty bool) (*Server, error) {
	spec, bin, own, opt := cs.spec, cs.bin, cs.settings, cs.opt
	var settings []Setting
	if opt.Valgrind != nil {
		settings = CountingSettings()
	}
	for _, s := range opt.Settings {
		st, err := ParseSetting(s)
		if err != nil {
			return nil, usage.Wrap(err) // the edge checked them, in the words of its flag
		}
		settings = append(settings, st)
	}
	settings = append(settings, own...)
	if !empty {
		log(fmt.Sprintf("starting an ephemeral PostgreSQL cluster from %s...", bin))
	}
	c, err := Start(ctx, Options{BinDir: bin, Tmpfs: opt.Tmpfs, TCP: opt.TCP, Settings: settings, OSUser: opt.OSUser, HBA: opt.HBA,
		DataSizeHint: needs.DataBytes, MaxConnections: needs.Connections + 10, Detach: opt.Keep, Valgrind: opt.Valgrind, Log: log, Empty: empty})
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
