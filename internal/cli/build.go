package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// defaultUnusedFor is what build --prune removes without --all or SPECs:
// builds not used for 30 days.
const defaultUnusedFor = 30 * 24 * time.Hour

func newBuildCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		cache            string
		list, prune, all bool
		unusedFor        time.Duration
	)
	cmd := &cobra.Command{
		Use:   "build SPEC... | --list | --prune [--all | --unused-for D] [SPEC...]",
		Short: "Build source targets ahead of a run; list and prune the build cache",
		Long: `Build what src: targets run, ahead of a run (a CI job warms the cache this
way), or find it built in the build cache. A SPEC is a target as --target takes
it, NAME=src:PATH[@REV][+PATCH...][,configure=ARGS][,ext=EXTPATH[@REV]] or
NAME=settings:,ext=EXTPATH[@REV] (extensions for the installed server) or
NAME=proxy:FILE.yaml (a definition with build:), or the same without NAME=
(src:PATH@REV, settings:,ext=EXTPATH@REV, or PATH@REV alone). Each build is
made in a scratch directory from an export of the tree (the checkout is never
touched) and moved into the cache only when complete: a failed or interrupted
build leaves nothing but its log and the failure remembered beside it
(pgscale bisect skips a commit whose build is known to fail); a SPEC whose
last build failed is built again. Progress goes to stderr; each build's key
and directory to stdout.

--list shows the cache's builds: key, name, source, commit, server version,
fast-path slots, size, when made and how long it took, when last used.
--prune removes builds: with SPECs every build but theirs (and the server
builds they were made from), with --all every build and every failed build's
log, else those not used for --unused-for (default 30 days); builds being
made are never touched.

The cache is --build-cache, else $PGSCALE_BUILD_CACHE, else
/var/cache/pgscale/builds for root, else ~/.cache/pgscale/builds.
Exit code 2 when a build fails (its first line names the target, the phase
and the log, then the log's last lines follow), 3 when interrupted.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := cache
			if dir == "" {
				var err error
				if dir, err = build.DefaultCacheDir(); err != nil {
					var ce *build.CacheDirError
					if errors.As(err, &ce) {
						ce.Word = "--build-cache"
					}
					return usage.Wrap(err)
				}
			}
			switch {
			case list && prune:
				return usage.Errorf("--list or --prune, not both")
			case list:
				if len(args) > 0 || all || cmd.Flags().Changed("unused-for") {
					return usage.Errorf("--list takes no SPEC, --all or --unused-for")
				}
				return listBuilds(stdout, dir)
			case prune:
				return pruneBuilds(cmd, stdout, dir, args, all, unusedFor)
			case all || cmd.Flags().Changed("unused-for"):
				return usage.Errorf("--all and --unused-for go with --prune")
			case len(args) == 0:
				return usage.Errorf("name what to build (SPEC, e.g. master=src:~/postgres@master), or give --list or --prune")
			}
			specs, err := buildSpecs(args)
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			opt := target.ClusterOptions{BuildCache: dir, Words: clusterWords()}
			log := func(s string) { fmt.Fprintln(stderr, s) }
			for _, s := range specs {
				b, err := target.Build(ctx, s, opt, log)
				if err != nil {
					return err
				}
				how := "made now"
				if b.Cached {
					how = "from the cache"
				}
				at := b.BinDir()
				if b.Manifest != nil && b.Manifest.Kind == build.KindCommand {
					at = b.Dir // a program's build: {{build}}
				}
				fmt.Fprintf(stdout, "%s: build %s (%s, %s): %s\n", specName(s), b.Key, how, describeBuild(b.Manifest), at)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.BoolVar(&list, "list", false, "list the builds in the cache")
	fs.BoolVar(&prune, "prune", false, "remove builds from the cache: with SPECs all but theirs, with --all every one, else those unused for --unused-for")
	fs.BoolVar(&all, "all", false, "with --prune: remove every build and failed build's log")
	fs.DurationVar(&unusedFor, "unused-for", defaultUnusedFor, "with --prune: remove the builds not used for this long")
	registerBuildCache(fs, &cache)
	return cmd
}

// buildSpecs reads build's SPECs: targets as --target takes them, or a
// source alone (src:PATH@REV or PATH@REV) without a name.
func buildSpecs(args []string) ([]target.Spec, error) {
	var out []target.Spec
	for _, a := range args {
		var s target.Spec
		var err error
		// A source alone is read as --pg-src's value, a target as
		// --target's; either's error is said as the SPEC given to build.
		before, _, named := strings.Cut(a, "=")
		switch rest, src := strings.CutPrefix(a, string(target.Src)+":"); {
		case src:
			s, err = target.FromSource(rest)
		case named && strings.Contains(before, ":"):
			// A target of another kind without NAME= (settings:,ext=PATH).
			s, err = target.ParseUnnamed(a)
		case named:
			s, err = target.ParseSpec(a)
		default:
			s, err = target.FromSource(a)
		}
		if err != nil {
			var se *target.SpecError
			if errors.As(err, &se) {
				se.Word, se.Spec, se.Unnamed = "build", a, false
			}
			return nil, usage.Wrap(err)
		}
		out = append(out, s)
	}
	return out, nil
}

// specName is a spec's name, or its argument when it has none.
func specName(s target.Spec) string {
	if s.Name != "" {
		return s.Name
	}
	if s.Kind != target.Src {
		return s.String()
	}
	return s.Arg.String()
}

// describeBuild says what a build holds: "PostgreSQL 15.18, fast-path
// slots 21".
func describeBuild(m *build.Manifest) string {
	if m == nil {
		return "no manifest"
	}
	var parts []string
	if v := strings.TrimPrefix(m.Version, "postgres (PostgreSQL) "); v != "" {
		parts = append(parts, "PostgreSQL "+v)
	} else if m.Kind == build.KindCommand {
		parts = append(parts, "built by: "+m.Command)
	} else {
		parts = append(parts, m.Kind)
	}
	if n, ok := m.FastPathSlots(); ok {
		parts = append(parts, fmt.Sprintf("fast-path slots %d", n))
	}
	if m.Kind == build.KindInstalled {
		parts[0] += " (the installed server's copy)"
	}
	for _, e := range m.Extensions {
		parts = append(parts, "extension "+extensionOf(e))
	}
	return strings.Join(parts, ", ")
}

// extensionOf says an extension of a build: its name, the revision and
// patches it was built from, and its make arguments or build command:
// "pgscale_loop@slow (commit 7c48ed4, +1 patch, make OPTFLAGS=)".
func extensionOf(e build.ExtensionRecord) string {
	s := e.Name
	if e.Source.Rev != "" {
		s += "@" + e.Source.Rev
	}
	var of []string
	if c := e.Source.Commit; c != "" {
		of = append(of, "commit "+c[:min(7, len(c))])
	} else if e.Source.Mode == build.ModeWorktree || e.Source.Mode == build.ModeDir {
		of = append(of, "the tree as it was")
	}
	for _, p := range e.Source.Patches {
		of = append(of, "+"+filepath.Base(p.Path))
	}
	if len(e.Make) > 0 {
		of = append(of, "make "+strings.Join(e.Make, " "))
	}
	if e.Run != "" {
		of = append(of, "built by: "+e.Run)
	}
	if len(of) > 0 {
		s += " (" + strings.Join(of, ", ") + ")"
	}
	return s
}

// listBuilds writes the cache's builds, the most recently used first.
func listBuilds(w io.Writer, dir string) error {
	ents, err := build.List(dir)
	if err != nil {
		return err
	}
	var total int64
	for _, e := range ents {
		total += e.Size
	}
	fmt.Fprintf(w, "build cache %s: %d builds, %s\n", dir, len(ents), megabytes(total))
	if len(ents) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "key\tname\tsource\tcommit\tholds\tsize\tmade\ttook\tlast used")
	for _, e := range ents {
		m := e.Manifest
		commit := m.Source.Commit
		if len(commit) > 7 {
			commit = commit[:7]
		}
		if commit == "" {
			commit = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Key, orDash(m.Name), sourceOf(m.Source), commit, describeBuild(m),
			megabytes(e.Size), e.Created.UTC().Format("2006-01-02 15:04"), m.Duration().Round(time.Second), e.LastUsed.UTC().Format("2006-01-02 15:04"))
	}
	return tw.Flush()
}

// sourceOf writes a build's source as PATH[@REV][+N patches].
func sourceOf(s build.SourceRecord) string {
	out := s.Path
	if s.Rev != "" {
		out += "@" + s.Rev
	}
	if n := len(s.Patches); n == 1 {
		out += " +1 patch"
	} else if n > 1 {
		out += fmt.Sprintf(" +%d patches", n)
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func megabytes(n int64) string { return fmt.Sprintf("%.0f MB", float64(n)/1e6) }

// pruneBuilds removes builds as the flags say and writes what it removed.
func pruneBuilds(cmd *cobra.Command, stdout io.Writer, dir string, args []string, all bool, unusedFor time.Duration) error {
	opt := build.PruneOptions{All: all}
	what := "every build"
	switch {
	case all && (len(args) > 0 || cmd.Flags().Changed("unused-for")):
		return usage.Errorf("--prune --all removes every build: drop the SPECs and --unused-for")
	case len(args) > 0:
		specs, err := buildSpecs(args)
		if err != nil {
			return err
		}
		opt.Unreferenced = true
		for _, s := range specs {
			k, err := target.BuildKey(cmd.Context(), s, target.ClusterOptions{BuildCache: dir, Words: clusterWords()})
			if err != nil {
				return err
			}
			opt.Keep = append(opt.Keep, k)
		}
		what = "every build but those of " + strings.Join(args, ", ")
	case !all:
		opt.UnusedFor = unusedFor
		what = "the builds not used for " + unusedFor.String()
	}
	removed, err := build.Prune(dir, opt)
	var freed int64
	for _, e := range removed {
		freed += e.Size
		fmt.Fprintf(stdout, "removed %s %s (%s, %s)\n", e.Key, orDash(e.Manifest.Name), sourceOf(e.Manifest.Source), megabytes(e.Size))
	}
	fmt.Fprintf(stdout, "pruned %s from %s: %d removed, %s freed\n", what, dir, len(removed), megabytes(freed))
	return err
}
