package target

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/proc"
	"github.com/pgscale/pgscale/internal/result"
)

// startReplica makes a streaming replica of the running cluster c: a base
// backup of it (pg_basebackup with the WAL streamed and -R, as c's OS
// user) in a directory of its own beside c's, started with c's settings on
// a socket (and with TCP a port) of its own, following c. The caller must
// Stop it, also after an error.
func (c *Cluster) startReplica(ctx context.Context) (r *Cluster, err error) {
	dir, err := mkdirTemp(filepath.Dir(c.Dir))
	if err != nil {
		return nil, fmt.Errorf("create replica directory: %w", err)
	}
	r = &Cluster{Dir: dir, DataDir: filepath.Join(dir, "data"), SocketDir: dir, LogFile: filepath.Join(dir, "server.log"),
		Port: 5432, TCP: c.TCP, BinDir: c.BinDir, Version: c.Version, Major: c.Major, User: c.User, Preloaded: c.Preloaded,
		opts: c.opts, cred: c.cred}
	if err = proc.GiveTo(dir, r.cred, c.opts.OSUser); err != nil {
		return r, err
	}
	out, err := c.command(ctx, "pg_basebackup", "-D", r.DataDir, "-h", c.SocketDir, "-p", strconv.Itoa(c.Port), "-U", c.User,
		"-X", "stream", "-R", "-c", "fast", "--no-sync")
	if err != nil {
		return r, fmt.Errorf("pg_basebackup from %s: %v: %s", c.SocketDir, err, proc.LastLines(out, 5))
	}
	if r.TCP {
		if r.Port, err = freePort(); err != nil {
			return r, err
		}
	}
	r.Settings = append([]Setting(nil), c.Settings...)
	r.setPort()
	return r, r.start(ctx)
}

// replicaServers starts n streaming replicas of srv's cluster and returns
// them as servers of their own (Info.Kind "replica"), stopping them all
// when one fails.
func replicaServers(ctx context.Context, srv *Server, n int, log func(string)) ([]*Server, error) {
	var out []*Server
	for i := 1; i <= n; i++ {
		log(fmt.Sprintf("starting streaming replica %d of %s...", i, srv.Info.Description))
		r, err := srv.Cluster.startReplica(ctx)
		if err != nil {
			if r != nil {
				r.Stop()
			}
			for _, o := range out {
				o.Close()
			}
			return nil, fmt.Errorf("replica %d: %w", i, err)
		}
		dsn := r.ConnString("postgres")
		if r.TCP {
			dsn = r.TCPConnString("postgres")
		}
		cfg, err := ParseDSN(dsn)
		if err != nil {
			r.Stop()
			return nil, err
		}
		out = append(out, &Server{Config: cfg, Cluster: r, keep: srv.keep, log: log, Info: result.Target{
			Kind: "replica", Name: replicaName(srv.Info.Name, i), Description: Describe(cfg), BinDir: r.BinDir, Preloaded: r.Preloaded}})
	}
	return out, nil
}

// replicaName names a target's i-th replica: "a-replica1", or "replica1"
// for run's.
func replicaName(target string, i int) string {
	if target == "" {
		return "replica" + strconv.Itoa(i)
	}
	return target + "-replica" + strconv.Itoa(i)
}

// CatchUp waits until every streaming replica of the server has replayed
// what the server had written when CatchUp was called (the data just
// made), for at most five minutes.
func (s *Server) CatchUp(ctx context.Context) error {
	if len(s.Replicas) == 0 {
		return nil
	}
	lsn, err := s.queryOne(ctx, "SELECT pg_current_wal_lsn()::text")
	if err != nil {
		return fmt.Errorf("read the primary's WAL position: %w", err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for _, r := range s.Replicas {
		for {
			done, err := r.queryOne(ctx, "SELECT (pg_last_wal_replay_lsn() >= '"+lsn+"'::pg_lsn)::text")
			if err == nil && done == "true" {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("replica %s has not replayed the primary's WAL up to %s within 5 minutes (%v)", r.Info.Name, lsn, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

// queryOne runs a query of one value on a connection of its own.
func (s *Server) queryOne(ctx context.Context, sql string) (string, error) {
	conn, err := pgconn.ConnectConfig(ctx, s.Config)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	res := conn.ExecParams(ctx, sql, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return "", res.Err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return "", fmt.Errorf("%s: no value", sql)
	}
	return string(res.Rows[0][0]), nil
}

// UpstreamServer is one server behind a target: one a proxy fronts, or a
// streaming replica of it.
type UpstreamServer struct {
	Name   string // the target's name, or the replica's ("a-replica1")
	Role   string // "primary" or "replica"
	Server *Server
}

// Upstreams lists the servers behind a target, in the order a proxy's
// templates see them: for a proxy, each server it fronts followed by that
// server's replicas; for another target, its server and its replicas.
// Nil for a target with one server and no replica.
func (s *Server) Upstreams() []UpstreamServer {
	fronts := []*Server{s.Origin()}
	if s.Pooler != nil && s.how != nil && len(s.how.fronts) > 0 {
		fronts = s.how.fronts
	}
	var out []UpstreamServer
	for _, f := range fronts {
		out = append(out, UpstreamServer{Name: f.Info.Name, Role: "primary", Server: f})
		for _, r := range f.Replicas {
			out = append(out, UpstreamServer{Name: r.Info.Name, Role: "replica", Server: r})
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// OwnFronts are the servers a pooler started for itself to stand in
// front of (run --pooler), which it stops with it: the data is made on
// each.
func (s *Server) OwnFronts() []*Server { return s.owned }
