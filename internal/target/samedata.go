package target

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/pgscale/pgscale/internal/proc"
)

// storageFields are the lines of pg_controldata that fix how a data
// directory is laid out on disk: a server reads another's data directory
// when all of them agree (the catalog version first: a build whose
// catalogs differ refuses to start on it, or worse, misreads it). The
// rest of pg_control (the checkpoint, the settings it was last run with)
// is the data's state, not its format.
var storageFields = []string{
	"pg_control version number",
	"Catalog version number",
	"Maximum data alignment",
	"Database block size",
	"Blocks per segment of large relation",
	"WAL block size",
	"Bytes per WAL segment",
	"Maximum length of identifiers",
	"Maximum columns in an index",
	"Maximum size of a TOAST chunk",
	"Size of a large-object chunk",
	"Date/time type storage",
	"Float8 argument passing",
	"Data page checksum version",
}

// control runs the cluster's own pg_controldata on its data directory
// and returns its storage fields by name.
func (c *Cluster) control(ctx context.Context) (map[string]string, error) {
	out, err := c.command(ctx, "pg_controldata", "-D", c.DataDir)
	if err != nil {
		return nil, fmt.Errorf("pg_controldata: %v: %s", err, proc.LastLines(out, 3))
	}
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			got[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	fields := map[string]string{}
	for _, f := range storageFields {
		v, ok := got[f]
		if !ok {
			return nil, fmt.Errorf("pg_controldata of %s says nothing of %q", c.DataDir, f)
		}
		fields[f] = v
	}
	return fields, nil
}

// storage is what a server's binaries make of a data directory:
// pg_controldata's storage fields of its own cluster, and the share
// directory the server reads its extensions' files from.
type storage struct {
	control map[string]string
	share   string
}

// storageOf is the server's storage (a pooler's: the server it fronts),
// asked of its running cluster the first time and kept: the binaries do
// not change from one layout to the next.
func (s *Server) storageOf(ctx context.Context) (*storage, error) {
	o := s.Origin()
	if o.storage != nil {
		return o.storage, nil
	}
	ctl, err := o.Cluster.control(ctx)
	if err != nil {
		return nil, err
	}
	share, err := o.shareDir(ctx)
	if err != nil {
		return nil, err
	}
	o.storage = &storage{control: ctl, share: share}
	return o.storage, nil
}

// Copyable says whether a copy of from's data directory can be run by
// to's server, where each is an ephemeral cluster (a pooler's: the server
// it fronts): "" when it can, else why not, in words ("its catalog
// version number is 202307071, the data's 202209061"). The two clusters'
// on-disk formats must agree (pg_controldata: the catalog version, block
// sizes, alignment, checksums), from's data must lie wholly inside its
// data directory (no tablespace elsewhere), and every extension created in
// from's database must be installed for to's server from the same files
// (its control file and SQL scripts, which made the catalog entries a
// copy carries; the library, the extension's code, may differ). A server
// with streaming replicas or several servers behind a pooler keeps data
// of its own. from's server must be running, its data made; to's
// storage is asked of its server once (it must be running then) and kept
// for later layouts. An error means the question could not be asked.
func Copyable(ctx context.Context, from, to *Server) (string, error) {
	f, t := from.Origin(), to.Origin()
	switch {
	case f.Cluster == nil || t.Cluster == nil:
		return "not an ephemeral cluster", nil
	case f == t:
		return "", nil
	case len(f.Replicas) > 0 || len(t.Replicas) > 0:
		return "a server with streaming replicas makes its data, which they replay, itself", nil
	case len(to.OwnFronts()) > 1 || len(from.OwnFronts()) > 1:
		return "a proxy in front of several servers of its own has them make their data themselves", nil
	}
	if ts, _ := os.ReadDir(filepath.Join(f.Cluster.DataDir, "pg_tblspc")); len(ts) > 0 {
		return "the set-up made a tablespace outside the data directory, which a copy of it would not carry", nil
	}
	fs, err := from.storageOf(ctx)
	if err != nil {
		return "", err
	}
	ts, err := to.storageOf(ctx)
	if err != nil {
		return "", err
	}
	for _, k := range storageFields {
		if fs.control[k] != ts.control[k] {
			return fmt.Sprintf("its %s is %s, the data's %s: its server cannot read that data", strings.ToLower(k[:1])+k[1:], ts.control[k], fs.control[k]), nil
		}
	}
	exts, err := f.extensions(ctx)
	if err != nil {
		return "", err
	}
	for _, e := range exts {
		a, err := extensionFiles(fs.share, e)
		if err != nil {
			return "", err
		}
		b, err := extensionFiles(ts.share, e)
		if err != nil {
			return "", err
		}
		if a != b {
			return fmt.Sprintf("extension %s, created in the data, is installed from other files (its control file or SQL scripts differ), so the catalog entries a copy carries may not be its", e), nil
		}
	}
	return "", nil
}

// extensions lists the extensions created in the server's database.
func (s *Server) extensions(ctx context.Context) ([]string, error) {
	rows, err := s.queryRows(ctx, "SELECT extname FROM pg_extension WHERE extname <> 'plpgsql' ORDER BY 1")
	if err != nil {
		return nil, fmt.Errorf("list the data's extensions: %w", err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, r[0])
	}
	return out, nil
}

// shareDir is where the server reads its extensions' files from (its
// share directory, as the server itself finds it: relative to its
// executable).
func (s *Server) shareDir(ctx context.Context) (string, error) {
	rows, err := s.queryRows(ctx, "SELECT setting FROM pg_config WHERE name = 'SHAREDIR'")
	if err != nil || len(rows) == 0 {
		return "", fmt.Errorf("ask the server for its share directory: %v", err)
	}
	return rows[0][0], nil
}

// queryRows runs sql on a connection of its own and returns the rows as
// text.
func (s *Server) queryRows(ctx context.Context, sql string) ([][]string, error) {
	conn, err := s.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	res := conn.ExecParams(ctx, sql, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, res.Err
	}
	out := make([][]string, len(res.Rows))
	for i, r := range res.Rows {
		for _, v := range r {
			out[i] = append(out[i], string(v))
		}
	}
	return out, nil
}

// extensionFiles is a digest of extension ext's control file and SQL
// scripts in share (their names and contents).
func extensionFiles(share, ext string) (string, error) {
	dir := filepath.Join(share, "extension")
	names, err := filepath.Glob(filepath.Join(dir, ext+"--*.sql"))
	if err != nil {
		return "", err
	}
	names = append(names, filepath.Join(dir, ext+".control"))
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(n), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CopyData gives every server of to a byte-identical copy of from's data
// (each an ephemeral cluster, or a pooler's: the server it fronts, which
// Copyable said can read it): from's server is shut down (a fast
// shutdown, which writes a checkpoint: its data directory is then a
// consistent whole), each of to's too, and each one's data directory is
// replaced by a copy of from's (cp -a, as the servers' OS user, sharing
// blocks where the file system can: --reflink=auto). The servers are left
// stopped: each starts again with its own settings, port and binaries
// (pgscale.conf is written at every start), counted or not as it will be
// run (Cluster.Count, Cluster.Restart). Everything else in the data
// directory, postgresql.auto.conf and pg_hba.conf included, is from's.
func CopyData(ctx context.Context, from *Server, to []*Server) error {
	f := from.Origin().Cluster
	if f == nil {
		return errors.New("copy the data: the server holding it is not an ephemeral cluster")
	}
	f.shutdown()
	if _, err := os.Stat(filepath.Join(f.DataDir, "postmaster.pid")); err == nil {
		return fmt.Errorf("copy the data: the server on %s did not shut down cleanly; its log: %s", f.DataDir, f.Log(3))
	}
	cp, err := exec.LookPath("cp")
	if err != nil {
		return fmt.Errorf("copy the data: %w", err)
	}
	errs := make([]error, len(to))
	var wg sync.WaitGroup
	for i, s := range to {
		c := s.Origin().Cluster
		if c == nil || c == f {
			continue
		}
		wg.Go(func() { errs[i] = c.takeData(ctx, cp, f.DataDir) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// takeData shuts the server down and replaces its data directory by a
// copy of dir.
func (c *Cluster) takeData(ctx context.Context, cp, dir string) error {
	c.shutdown()
	tmp := c.DataDir + ".copy"
	out, err := proc.Output(ctx, proc.Spec{Name: "cp", Path: cp, Args: []string{"-a", "--reflink=auto", dir, tmp}, Dir: c.Dir,
		Env: childEnv(), Cred: c.cred})
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("copy the data into %s: %v: %s", c.Dir, err, proc.LastLines(out, 2))
	}
	if err := os.RemoveAll(c.DataDir); err != nil {
		return fmt.Errorf("copy the data: %w", err)
	}
	if err := os.Rename(tmp, c.DataDir); err != nil {
		return fmt.Errorf("copy the data: %w", err)
	}
	return nil
}

// Resume starts a server CopyData left stopped, on its copy of the data:
// under Valgrind when its instructions are counted (Options.Valgrind),
// as Count would once its data is made, else natively.
func (s *Server) Resume(ctx context.Context) error {
	c := s.Origin().Cluster
	if c == nil {
		return nil
	}
	c.mu.Lock()
	c.counted = c.opts.Valgrind != nil
	c.mu.Unlock()
	return c.startRetrying(ctx)
}

// Empty reports whether the server's cluster has no data yet: Renew made
// it so (its empty servers), for a copy of another's data.
func (s *Server) Empty() bool {
	c := s.Origin().Cluster
	if c == nil {
		return false
	}
	_, err := os.Stat(c.DataDir)
	return errors.Is(err, os.ErrNotExist)
}

// Initdb gives a server whose cluster Renew made empty data of its own
// (initdb) and starts it, natively: what it would have had without
// empty. Nothing for a server with data.
func (s *Server) Initdb(ctx context.Context) error {
	if !s.Empty() {
		return nil
	}
	return s.Origin().Cluster.initialize(ctx)
}
