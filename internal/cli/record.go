package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/schedule/cells"
	"github.com/pgscale/pgscale/internal/store"
	"github.com/pgscale/pgscale/internal/usage"
)

// storeHelp says what --store takes, for every command that has it.
const storeHelp = "history store: an SQLite file, or a postgres:// URL or keyword/value connection string"

// recordFlags are the flags of run and ab that record the result files
// they wrote in a history store: where, and under which label and commit.
type recordFlags struct {
	location string
	// label and commit are run's; labels and commits ab's, as given:
	// [NAME=]VALUE, VALUE alone for every target without its own.
	label, commit   string
	labels, commits []string
	perTarget       bool
}

// register registers --store, --label and --commit. perTarget takes
// --label and --commit once per target, NAME=VALUE.
func (r *recordFlags) register(fs *pflag.FlagSet, perTarget bool) {
	r.perTarget = perTarget
	fs.StringVar(&r.location, "store", "", "record the result files in this "+storeHelp+" (default $"+store.EnvLocation+"; with neither, nothing is recorded)")
	if perTarget {
		fs.StringArrayVar(&r.labels, "label", nil, "history label [NAME=]LABEL of target NAME, or of every target without one (default: the target's name; repeatable)")
		fs.StringArrayVar(&r.commits, "commit", nil, "commit [NAME=]SHA target NAME measured, or every target without one (default: the commit a src: target was built from; git, when the directory of the target's server binaries is in a work tree; else the CI environment's commit; repeatable)")
		return
	}
	fs.StringVar(&r.label, "label", "", `history label: the line of history the run belongs to (default "default")`)
	fs.StringVar(&r.commit, "commit", "", "commit the target was built from (default: the commit --pg-src built; git, when the directory of the ephemeral cluster's server binaries is in a work tree; else the CI environment's commit)")
}

// where returns the store to record in: --store, else $PGSCALE_STORE, else
// "" (record nothing).
func (r *recordFlags) where() string {
	if r.location != "" {
		return r.location
	}
	return os.Getenv(store.EnvLocation)
}

// check finds mistakes before anything runs: a label or commit with no
// store to record them in, a store that cannot be written, and NAME=
// forms naming no target.
func (r *recordFlags) check(targets []string) error {
	if r.where() == "" && (len(r.labels) > 0 || len(r.commits) > 0 || r.label != "" || r.commit != "") {
		return usage.Errorf("--label and --commit say what --store records: give --store LOCATION or set %s", store.EnvLocation)
	}
	if loc := r.where(); loc != "" {
		if err := store.CheckWritable(loc); err != nil {
			return usage.Errorf("--store: %v; nothing was run", err)
		}
	}
	if !r.perTarget {
		return nil
	}
	for flag, vals := range map[string][]string{"--label": r.labels, "--commit": r.commits} {
		if _, err := perTarget(flag, vals, targets); err != nil {
			return err
		}
	}
	return nil
}

// perTarget reads [NAME=]VALUE values: the value of each name, and under
// "" the one for every other target. Names must be among targets when
// targets is given.
func perTarget(flag string, vals, targets []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range vals {
		name, value, ok := strings.Cut(v, "=")
		if !ok {
			name, value = "", v
		}
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if value == "" {
			return nil, usage.Errorf("%s %q: empty value", flag, v)
		}
		if name != "" && targets != nil && !slices.Contains(targets, name) {
			return nil, usage.Errorf("%s %q: no target is called %s (targets: %s)", flag, v, name, strings.Join(targets, ", "))
		}
		if _, dup := out[name]; dup {
			if name == "" {
				return nil, usage.Errorf("%s given twice for every target", flag)
			}
			return nil, usage.Errorf("%s given twice for target %s", flag, name)
		}
		out[name] = value
	}
	return out, nil
}

// written is a result file a runner wrote, or a micro-benchmark run
// file.
type written struct {
	path string
	file *result.File
	// series is the workload's name in the store (store.Meta.Workload):
	// a suite's cell's, or empty.
	series string
	// micro marks a micro-benchmark run file (file is then nil).
	micro bool
}

// bundleFiles returns the result files of a suite's bundle, each named
// after its cell, and whether dir is a bundle at all.
func bundleFiles(dir string) ([]written, bool, error) {
	if _, err := os.Stat(filepath.Join(dir, result.SuiteIndexFile)); err != nil {
		return nil, false, nil
	}
	x, err := result.ReadSuiteIndex(dir)
	if err != nil {
		return nil, true, usage.Wrap(err)
	}
	var out []written
	for _, c := range x.Cells {
		for _, name := range c.Files {
			path := filepath.Join(dir, c.Dir, name)
			f, err := result.Read(path)
			if err != nil {
				return nil, true, usage.Wrap(err)
			}
			out = append(out, written{path: path, file: f, series: store.CellKey(x.Name, c.Key)})
		}
	}
	// The micro cells' run files, each its cell's benchmarks.
	paths, _ := filepath.Glob(filepath.Join(dir, cells.MicroFile("*")))
	for _, p := range paths {
		run, err := micro.ReadRun(p)
		if err != nil {
			return nil, true, usage.Wrap(err)
		}
		out = append(out, written{path: p, series: store.CellKey(x.Name, store.MicroCell(run.Project())), micro: true})
	}
	return out, true, nil
}

// record adds the files to the store, if one is named, and says on w what
// it stored. The files are on disk already: a store that cannot be opened
// or written loses nothing, and its error comes back as one line.
func (r *recordFlags) record(ctx context.Context, w io.Writer, files []written) error {
	loc := r.where()
	if loc == "" || len(files) == 0 {
		return nil
	}
	labels, _ := perTarget("--label", r.labels, nil)
	commits, _ := perTarget("--commit", r.commits, nil)
	if !r.perTarget {
		labels, commits = map[string]string{"": r.label}, map[string]string{"": r.commit}
	}
	st, err := store.Open(ctx, loc)
	if err != nil {
		return err
	}
	defer st.Close()
	pending := make([]store.Pending, len(files))
	for i, wf := range files {
		pending[i] = store.Pending{Path: wf.path, File: wf.file, Workload: wf.series, Micro: wf.micro}
	}
	added, err := st.AddFiles(ctx, pending, store.AddOptions{Labels: labels, Commits: commits, Git: true})
	for _, a := range added {
		line := storedLine(st.Location(), a)
		for _, wf := range files {
			if wf.path == a.Path && !a.Duplicate {
				line += twinNote(wf.file, a.Label)
			}
		}
		fmt.Fprintln(w, line)
	}
	return err
}

// twinNote says, for the twin of an A/A calibration (ab --calibrate), what
// its label is: the baseline measured a second time, stored under a label
// of its own so that the baseline's history keeps one point per run.
func twinNote(f *result.File, label string) string {
	if f == nil || f.AB == nil || !f.AB.Calibration || len(f.AB.Targets) < 2 || f.Target.Name == "" || f.Target.Name == f.AB.Baseline {
		return ""
	}
	return fmt.Sprintf("; %s is the A/A twin of %s (the same target run a second time), kept under a label of its own so that %s's history holds one point per run; --label %s=LABEL names it otherwise",
		label, f.AB.Baseline, f.AB.Baseline, f.Target.Name)
}

// storedLine says what was stored: "stored: results/x.json as result 12
// in STORE (label main, commit 8c1e2f0 from $GITHUB_SHA, 16 points)".
func storedLine(location string, a store.Added) string {
	commit := "no commit"
	if a.Meta.Commit != "" {
		source := a.CommitFrom
		if source == "" {
			source = "--commit"
		}
		commit = "commit " + report.ShortCommit(a.Meta.Commit) + " from " + source
	}
	path := a.Path
	if a.Target != "" {
		path += " (target " + a.Target + ")"
	}
	if a.Duplicate {
		return fmt.Sprintf("stored: %s was stored before, as result %d in %s; nothing added", path, a.ResultID, location)
	}
	return fmt.Sprintf("stored: %s as result %d in %s (label %s, %s, %d points)", path, a.ResultID, location, a.Label, commit, a.Points)
}
