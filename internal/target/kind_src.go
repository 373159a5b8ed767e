package target

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// Src is an ephemeral cluster from PostgreSQL that pgscale builds from
// source: NAME=src:PATH[@REV][+PATCH...][,configure=ARGS][,ext=EXTPATH[@REV][,make=ARGS|,run=CMD]].
const Src Kind = "src"

var srcKind = kind{
	name: Src, form: "src:PATH[@REV][+PATCH...][,configure=ARGS][," + extShort + "]", ephemeral: true, counts: true, builds: true,
	help: func(w Words) string {
		return "an ephemeral cluster from PostgreSQL built from source: PATH a git repository at revision REV (default: the working tree " +
			"as it is) or an unpacked release, the PATCH files applied in order, configure's ARGS after pgscale's defaults " +
			"(--enable-debug --disable-cassert CFLAGS=-O2; quote ARGS holding commas: configure='...'), and extensions built " +
			"against it with PGXS (ext=, repeatable; make= PGXS's make arguments, run= a build command of its own); each build is made once and kept in the build cache" + in(w.BuildCache)
	},
	parse: parseSrc,
}

// SrcArg is a src target's build: the PostgreSQL source, configure's
// arguments after pgscale's defaults, and the extensions built against it.
type SrcArg struct {
	Source     build.Source
	Configure  []string
	Extensions []build.Extension
}

func parseSrc(arg string) (Arg, error) {
	items, err := splitItems(arg)
	if err != nil {
		return nil, err
	}
	want := "want src:PATH[@REV][+PATCH...][,configure=ARGS][," + extForm + "]"
	if len(items) == 0 || isSrcOption(items[0]) {
		return nil, errors.New("src: names no source tree: " + want)
	}
	var a SrcArg
	if a.Source, err = build.ParseSource(unquote(items[0])); err != nil {
		return nil, err
	}
	for _, it := range items[1:] {
		var isExt bool
		if a.Extensions, isExt, err = extItem(it, a.Extensions); err != nil {
			return nil, err
		} else if isExt {
			continue
		}
		k, v, _ := strings.Cut(it, "=")
		v = unquote(strings.TrimSpace(v))
		switch strings.TrimSpace(k) {
		case "configure":
			args, err := splitArgs(v)
			if err != nil {
				return nil, fmt.Errorf("configure=: %v", err)
			}
			a.Configure = append(a.Configure, args...)
		default:
			return nil, fmt.Errorf("src: %q: %s", it, want)
		}
	}
	return a, nil
}

func isSrcOption(item string) bool {
	k, _, ok := strings.Cut(item, "=")
	k = strings.TrimSpace(k)
	return ok && (k == "configure" || k == "ext" || k == "make" || k == "run")
}

// unquote drops single quotes around a whole item or value.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return s[1 : len(s)-1]
	}
	return s
}

// splitArgs splits configure's arguments on blanks; double quotes keep
// blanks in one argument (CFLAGS="-O2 -g").
func splitArgs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quoted, have := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, have = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if have {
				out = append(out, cur.String())
			}
			cur.Reset()
			have = false
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unbalanced double quote in %q", s)
	}
	if have {
		out = append(out, cur.String())
	}
	return out, nil
}

// String returns the spec's argument as it can be given again.
func (a SrcArg) String() string {
	parts := []string{quoteItem(a.Source.String())}
	if len(a.Configure) > 0 {
		args := make([]string, len(a.Configure))
		for i, c := range a.Configure {
			if c == "" || strings.ContainsAny(c, " \t") {
				c = `"` + c + `"`
			}
			args[i] = c
		}
		parts = append(parts, "configure="+quoteItem(strings.Join(args, " ")))
	}
	return strings.Join(append(parts, extStrings(a.Extensions)...), ",")
}

// quoteItem puts single quotes around a value holding a comma.
func quoteItem(s string) string {
	if strings.Contains(s, ",") {
		return "'" + s + "'"
	}
	return s
}

// postgres is what internal/build makes of the target, labelled with the
// target's name.
func (a SrcArg) postgres(spec Spec) build.Postgres {
	return build.Postgres{Name: spec.Name, Source: a.Source, Configure: a.Configure, Extensions: a.Extensions}
}

func (a SrcArg) plan(ctx context.Context, spec Spec, o *opening) (starter, error) {
	bld, err := buildOf(ctx, spec, a, o)
	if err != nil {
		return nil, err
	}
	bin, err := FindBinDir(bld.BinDir(), Words{})
	if err != nil {
		return nil, named(spec, fmt.Errorf("the build in %s: %w", bld.Root, err))
	}
	rec, err := a.record(ctx, bld)
	if err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	return &clusterStart{spec: spec, bin: bin, opt: o.opt, record: func(t *result.Target) { t.Build = rec }}, nil
}

func (SrcArg) needsBuild() bool { return true }

func (a SrcArg) what(spec Spec, _ *opening) (build.Spec, string, error) {
	return a.postgres(spec), a.Source.String(), nil
}

// maxTailLine is the longest line of a failed build's log shown.
const maxTailLine = 160

// buildError turns a failed build into what the user reads: one line
// naming the target, the phase and the log, then the log's last lines,
// indented. An interrupted build stays what it is (exit 3, not 2).
func buildError(spec Spec, source string, err error) error {
	var be *build.Error
	isBuild := errors.As(err, &be)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if isBuild {
			return named(spec, &interrupted{msg: fmt.Sprintf("building %s: interrupted in phase %s; nothing cached", source, be.Phase), err: err})
		}
		return named(spec, fmt.Errorf("building %s: interrupted: %w", source, err))
	}
	if !isBuild {
		return usage.Wrap(named(spec, err))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "building %s failed in phase %s: %v", source, be.Phase, be.Err)
	if be.Log != "" {
		fmt.Fprintf(&b, " (log: %s)", be.Log)
	}
	for _, l := range be.Tail {
		if r := []rune(l); len(r) > maxTailLine {
			l = string(r[:maxTailLine-1]) + "…" // a compiler's command line; the log has it whole
		}
		b.WriteString("\n    | " + l)
	}
	return usage.Wrap(named(spec, &buildFailed{msg: b.String(), err: be}))
}

// buildFailed is a build that failed, in the words buildError gives it; it
// still is the *build.Error (errors.As), so that a caller can tell a
// commit that does not build from other mistakes (pgscale bisect skips it).
type buildFailed struct {
	msg string
	err *build.Error
}

func (e *buildFailed) Error() string { return e.msg }
func (e *buildFailed) Unwrap() error { return e.err }

// record is what the result file says of the build: the source as this
// target resolves it (the cache may hold the same tree from another
// checkout or commit), and how the build was made.
func (a SrcArg) record(ctx context.Context, bld *build.Build) (*result.Build, error) {
	src, err := build.ResolveSource(ctx, a.Source)
	if err != nil {
		return nil, err
	}
	m := bld.Manifest
	rec := &result.Build{Source: a.Source.String(), Path: src.Path, Rev: src.Rev, Mode: src.Mode, Commit: src.Commit, Tree: src.Tree,
		Patches: patchRecords(src.Patches), System: m.System, Configure: m.Configure, Compiler: m.Compiler, Key: bld.Key,
		Constants: m.Constants}
	if src.Mode == build.ModeWorktree && src.Commit != "" {
		// The working tree's hash against its commit's (of the same
		// directory, when PATH is inside the repository).
		out, err := exec.CommandContext(ctx, "git", "-C", src.Path, "rev-parse", "--verify", "-q", src.Commit+":./").Output()
		rec.Dirty = err == nil && strings.TrimSpace(string(out)) != src.Tree
	}
	rec.Extensions = extensionRecords(ctx, m, a.Extensions)
	return rec, nil
}

func patchRecords(ps []build.PatchRecord) []result.BuildPatch {
	var out []result.BuildPatch
	for _, p := range ps {
		out = append(out, result.BuildPatch{Path: p.Path, SHA256: p.SHA256})
	}
	return out
}

// interrupted is a build the context stopped: its message says where, and
// it still is the context's error (errors.Is context.Canceled).
type interrupted struct {
	msg string
	err error
}

func (e *interrupted) Error() string { return e.msg }
func (e *interrupted) Unwrap() error { return e.err }
