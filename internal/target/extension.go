package target

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// extForm is how a target spec names an extension to build against its
// server: ext=, then its make arguments or its own build command.
const extForm = "ext=EXTPATH[@REV][+PATCH...][,make=ARGS|,run=CMD]"

// extShort is extForm as a kind's form (help and errors) says it.
const extShort = "ext=EXTPATH[@REV]..."

// extItem reads one item of a spec that belongs to its extensions:
// ext=EXTPATH[@REV][+PATCH...] adds one; make=ARGS (PGXS's make's
// arguments, OPTFLAGS= PG_CFLAGS=-O1) and run=CMD (a build command that
// replaces PGXS's make) are of the ext= before them. It says whether the
// item was one of these.
func extItem(item string, exts []build.Extension) ([]build.Extension, bool, error) {
	k, v, ok := strings.Cut(item, "=")
	if !ok {
		return exts, false, nil
	}
	k, v = strings.TrimSpace(k), unquote(strings.TrimSpace(v))
	switch k {
	case "ext":
		src, err := build.ParseSource(v)
		if err != nil {
			return exts, true, fmt.Errorf("ext=: %v", err)
		}
		return append(exts, build.Extension{Source: src}), true, nil
	case "make", "run":
		if len(exts) == 0 {
			return exts, true, fmt.Errorf("%s= is of an extension: give it after the ext= it builds (%s)", k, extForm)
		}
		e := &exts[len(exts)-1]
		if k == "make" {
			args, err := splitArgs(v)
			if err != nil {
				return exts, true, fmt.Errorf("make=: %v", err)
			}
			e.Make = append(e.Make, args...)
		} else {
			if strings.TrimSpace(v) == "" {
				return exts, true, errors.New("run=: an empty build command")
			}
			if e.Run != "" {
				return exts, true, errors.New("run=: one build command per extension")
			}
			e.Run = v
		}
		if len(e.Make) > 0 && e.Run != "" {
			return exts, true, fmt.Errorf("ext=%s: make= and run= both given: make= is PGXS's, run= replaces PGXS; keep one", e.Source)
		}
		return exts, true, nil
	}
	return exts, false, nil
}

// extStrings writes extensions back as spec items.
func extStrings(exts []build.Extension) []string {
	var out []string
	for _, e := range exts {
		out = append(out, "ext="+quoteItem(e.Source.String()))
		if len(e.Make) > 0 {
			args := make([]string, len(e.Make))
			for i, a := range e.Make {
				if a == "" || strings.ContainsAny(a, " \t") {
					a = `"` + a + `"`
				}
				args[i] = a
			}
			out = append(out, "make="+quoteItem(strings.Join(args, " ")))
		}
		if e.Run != "" {
			out = append(out, "run="+quoteItem(e.Run))
		}
	}
	return out
}

// runBuild finds spec's build in the cache or makes it, saying what it
// does through o.log. A build that fails is a usage error (its one line,
// then the log's last lines); an interrupted one is not.
func runBuild(ctx context.Context, spec Spec, source string, what build.Spec, o *opening) (*build.Build, error) {
	pr := newBuildProgress(spec, source, o.log)
	b := o.opt.builder()
	b.Progress = pr.event
	if f, err := b.Failed(ctx, what); err == nil && f != nil {
		o.log(fmt.Sprintf("building %s: its last build (key %s) failed at %s in phase %s (log: %s); building it again",
			pr.name, short(f.Key), f.When.Format("2006-01-02 15:04 UTC"), f.Phase, f.Log))
	}
	bld, err := b.Build(ctx, what)
	pr.stop()
	if err != nil {
		var he *build.HeadersError
		if errors.As(err, &he) {
			return nil, usage.Wrap(named(spec, he))
		}
		return nil, buildError(spec, source, err)
	}
	pr.finished(bld)
	return bld, nil
}

// extensionRecords is what the result file says of the extensions a build
// holds, each with its source as the spec gave it, and its commit and tree
// as this target resolves them: the cache may hold the same tree built
// from another commit, whose manifest names that commit.
func extensionRecords(ctx context.Context, m *build.Manifest, given []build.Extension) []result.BuildExtension {
	var out []result.BuildExtension
	for i, e := range m.Extensions {
		x := result.BuildExtension{Name: e.Name, Source: e.Source.Path, Commit: e.Source.Commit, Tree: e.Source.Tree,
			Patches: patchRecords(e.Source.Patches), Make: e.Make, Run: e.Run, Controls: e.Controls}
		if i < len(given) {
			x.Source = given[i].Source.String()
			if src, err := build.ResolveSource(ctx, given[i].Source); err == nil {
				x.Commit, x.Tree = src.Commit, src.Tree
			}
		}
		out = append(out, x)
	}
	return out
}

// installed is what internal/build makes of a settings target's
// extensions: the installed server in bin, mirrored, with them.
func installed(spec Spec, bin string, exts []build.Extension) build.Installed {
	return build.Installed{Name: spec.Name, BinDir: bin, Extensions: exts}
}

// installedRecord is what the result file says of the installed server's
// copy with extensions.
func installedRecord(ctx context.Context, bld *build.Build, bin string, exts []build.Extension) *result.Build {
	m := bld.Manifest
	return &result.Build{Source: "installed " + bin, Path: bin, Mode: build.KindInstalled, System: build.KindInstalled,
		Configure: []string{}, Compiler: m.Compiler, Key: bld.Key, Extensions: extensionRecords(ctx, m, exts)}
}

// ErrNoExtensionServer says extensions were added to a target whose
// server pgscale does not start (an existing server's): an extension is
// built for an ephemeral cluster's.
var ErrNoExtensionServer = errors.New("extensions are built for an ephemeral cluster's server, not an existing server's")

// ExtensionError is one of run's extension values that cannot be read:
// Value as given, Item, when set, the item of it that names a second
// extension, and Err why. The edge words it in the flag that gave it.
type ExtensionError struct {
	Value string
	Item  string
	Err   error
}

// Error says which value (and item) and why.
func (e *ExtensionError) Error() string {
	if e.Item != "" {
		return fmt.Sprintf("%q: %q: %v", e.Value, e.Item, e.Err)
	}
	return fmt.Sprintf("%q: %v", e.Value, e.Err)
}

// Unwrap returns why.
func (e *ExtensionError) Unwrap() error { return e.Err }

// WithExtensions adds run's extension values (EXTPATH[@REV][+PATCH...],
// then ,make=ARGS or ,run=CMD; one extension each) to run's target: the
// ephemeral cluster from the installed server (settings:) or from source.
// A value that cannot be read is an *ExtensionError; a target whose server
// pgscale does not start, ErrNoExtensionServer.
func WithExtensions(t Spec, values []string) (Spec, error) {
	var exts []build.Extension
	want := errors.New("want " + strings.TrimPrefix(extForm, "ext="))
	for _, v := range values {
		items, err := splitItems(v)
		if err != nil {
			return t, &ExtensionError{Value: v, Err: err}
		}
		if len(items) == 0 {
			return t, &ExtensionError{Value: v, Err: want}
		}
		items[0] = "ext=" + items[0]
		for _, it := range items {
			var isExt bool
			if exts, isExt, err = extItem(it, exts); err != nil {
				return t, &ExtensionError{Value: v, Err: err}
			} else if !isExt || (it != items[0] && strings.HasPrefix(strings.TrimSpace(it), "ext=")) {
				return t, &ExtensionError{Value: v, Item: it, Err: want}
			}
		}
	}
	if len(exts) == 0 {
		return t, nil
	}
	switch a := t.Arg.(type) {
	case SettingsArg:
		a.Extensions = append(a.Extensions, exts...)
		t.Arg = a
	case SrcArg:
		a.Extensions = append(a.Extensions, exts...)
		t.Arg = a
	default:
		return t, ErrNoExtensionServer
	}
	return t, nil
}
