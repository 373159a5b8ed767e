package target

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// Revisioned is the source of a target that pgscale bisect moves from
// commit to commit: the one of its sources written without a revision.
type Revisioned struct {
	// What names the source within the target: "the server", "the
	// extension", "the proxy's build" (its path is Source.Path).
	What string
	// Source is the source as written (no revision); Path is absolute.
	Source build.Source
}

// Label names the source among the target's others: an extension by its
// path, since a target may have several.
func (r Revisioned) Label() string {
	if r.What == extensionWhat {
		return r.What + " " + r.Source.Path
	}
	return r.What
}

const extensionWhat = "the extension"

// revisable is an Arg with sources at revisions: the server and the
// extensions of src:, the extensions of settings:, a pgbouncer:'s src=, a
// proxy's build:.
type revisable interface {
	// sources lists them, each with its revision as written.
	sources() []Revisioned
	// atRev returns the Arg with source i at rev.
	atRev(i int, rev string) (Arg, error)
}

// Recorded returns the spec as a result file records it
// (result.Target.Spec): KIND:ARG without the A/B name, every relative path
// in it made absolute (RebaseSpec against the working directory),
// passwords redacted.
func (t Spec) Recorded() string {
	t.Name = ""
	s := t.String()
	if wd, err := os.Getwd(); err == nil {
		s = rebaseUnnamed(s, wd)
	}
	return s
}

// BisectSource returns the one source of spec's target written without a
// revision, which bisect builds at each commit; the target's other
// sources keep the revisions they were given. A target with no source,
// or with more than one written without a revision, is a usage error
// that says how to write it (one whose every source has its revision, an
// *AllRevisionedError the edge words).
func BisectSource(spec Spec) (Revisioned, int, error) {
	r, ok := spec.Arg.(revisable)
	if !ok {
		return Revisioned{}, 0, usage.Errorf("%s builds nothing from source: bisect takes src:PATH, settings:,ext=PATH, src:PATH@REV,ext=PATH, pgbouncer:src=PATH or a proxy: definition whose build: has a source", spec)
	}
	srcs := r.sources()
	found := -1
	for i, s := range srcs {
		if s.Source.Rev != "" {
			continue
		}
		if found >= 0 {
			return Revisioned{}, 0, usage.Errorf("%s: %s and %s are both written without a revision; give the one not bisected its revision (PATH@REV)", spec, srcs[found].Label(), s.Label())
		}
		found = i
	}
	if found < 0 {
		if len(srcs) == 0 {
			return Revisioned{}, 0, usage.Errorf("%s builds nothing from source: bisect takes src:PATH, settings:,ext=PATH, pgbouncer:src=PATH or a proxy: definition whose build: has a source", spec)
		}
		return Revisioned{}, 0, usage.Wrap(&AllRevisionedError{Spec: spec})
	}
	s := srcs[found]
	abs, err := filepath.Abs(s.Source.Path)
	if err != nil {
		return Revisioned{}, 0, usage.Errorf("%s: %v", spec, err)
	}
	s.Source.Path = abs
	return s, found, nil
}

// AtRevision returns spec with its source i (BisectSource's) at rev.
func AtRevision(spec Spec, i int, rev string) (Spec, error) {
	r, ok := spec.Arg.(revisable)
	if !ok {
		return Spec{}, fmt.Errorf("%s builds nothing from source", spec)
	}
	a, err := r.atRev(i, rev)
	if err != nil {
		return Spec{}, err
	}
	spec.Arg = a
	return spec, nil
}

// BuildAt makes what spec's target starts from (a src: target's build, a
// settings: target's extensions, a proxy's build: program), or finds it
// in the build cache, saying what it does through log; nothing starts. A
// build that fails is an error that holds a *build.Error (errors.As);
// other mistakes are usage errors.
func BuildAt(ctx context.Context, spec Spec, opt ClusterOptions, log func(string)) (*build.Build, error) {
	if a, ok := spec.Arg.(ProxyArg); ok {
		if a.Def.Build == nil {
			return nil, usage.Errorf("%s: the proxy's definition has no build:", spec)
		}
		return buildProxy(ctx, spec, a, opt, log)
	}
	return Build(ctx, spec, opt, log)
}

// FailedBuild returns the remembered failure of what BuildAt would build
// for spec (build.Builder.Failed), or nil: the build's last attempt failed
// and nothing has built it since. It builds nothing; a target that builds
// nothing, or whose build cannot be planned, is a usage error.
func FailedBuild(ctx context.Context, spec Spec, opt ClusterOptions) (*build.Failure, error) {
	b, err := builderOf(spec)
	if err != nil {
		return nil, err
	}
	w, _, err := b.what(spec, newOpening(opt, Needs{}, nil))
	if err == nil {
		var f *build.Failure
		if f, err = opt.builder().Failed(ctx, w); err == nil {
			return f, nil
		}
	}
	return nil, usage.Wrap(named(spec, err))
}

func (a SrcArg) sources() []Revisioned {
	out := []Revisioned{{What: "the server", Source: a.Source}}
	for _, e := range a.Extensions {
		out = append(out, Revisioned{What: extensionWhat, Source: e.Source})
	}
	return out
}

func (a SrcArg) atRev(i int, rev string) (Arg, error) {
	if i == 0 {
		a.Source.Rev = rev
		return a, nil
	}
	a.Extensions = atRevExt(a.Extensions, i-1, rev)
	return a, nil
}

func (a SettingsArg) sources() []Revisioned {
	var out []Revisioned
	for _, e := range a.Extensions {
		out = append(out, Revisioned{What: extensionWhat, Source: e.Source})
	}
	return out
}

func (a SettingsArg) atRev(i int, rev string) (Arg, error) {
	a.Extensions = atRevExt(a.Extensions, i, rev)
	return a, nil
}

// atRevExt returns a copy of exts with extension i at rev.
func atRevExt(exts []build.Extension, i int, rev string) []build.Extension {
	out := append([]build.Extension(nil), exts...)
	out[i].Source.Rev = rev
	return out
}

func (a ProxyArg) sources() []Revisioned {
	if a.Def.Build == nil {
		return nil
	}
	src, err := build.ParseSource(a.Def.Build.Source)
	if err != nil {
		return nil // checked when the definition was read
	}
	return []Revisioned{{What: "the proxy's build", Source: src}}
}

// atRev writes the definition again with its build's source at rev, as an
// inline definition (the file, if any, is left alone), its paths made
// absolute: the command's program and the source were taken from the
// file's directory.
func (a ProxyArg) atRev(_ int, rev string) (Arg, error) {
	src, err := build.ParseSource(a.Def.Build.Source)
	if err != nil {
		return nil, err
	}
	if src.Path, err = filepath.Abs(src.Path); err != nil {
		return nil, err
	}
	src.Rev = rev
	raw := []byte(a.Inline)
	if a.File != "" {
		if raw, err = os.ReadFile(a.File); err != nil {
			return nil, fmt.Errorf("proxy: %v", err)
		}
	}
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("the proxy definition: %s", oneLine(yaml.FormatError(err, false, true)))
	}
	if p, ok := m["proxy"].(map[string]any); ok && m["command"] == nil {
		m = p // a suite file's target map: name: and proxy:
	}
	b, _ := m["build"].(map[string]any)
	if b == nil {
		return nil, fmt.Errorf("the proxy definition has no build: with a source")
	}
	b["source"] = src.String()
	m["command"] = a.Def.Command
	js, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("the proxy definition: %w", err)
	}
	out, err := readProxy(js, "the proxy definition", "")
	if err != nil {
		return nil, err
	}
	out.Inline = string(js)
	return out, nil
}

func (a PgBouncerArg) sources() []Revisioned {
	if a.Source == nil {
		return nil
	}
	return []Revisioned{{What: "pgbouncer's tree", Source: *a.Source}}
}

// atRev is the same pgbouncer built from its tree at rev.
func (a PgBouncerArg) atRev(_ int, rev string) (Arg, error) {
	src := *a.Source
	src.Rev = rev
	a.Source = &src
	return a, nil
}

// Fronted returns a pooler or proxy spec that names no server to front
// with one of its own (of='settings:'), as bisect measures each commit's
// pooler on a server of its own; other specs come back as they are.
func Fronted(spec Spec) Spec {
	k := spec.kind()
	if k.fronts == 0 || len(spec.Of) > 0 {
		return spec
	}
	s := spec
	s.Of = []string{"settings:"}
	if err := s.ownFronts(); err != nil {
		return spec
	}
	return s
}

// HasFrontName reports whether spec fronts another target by its name
// (of=NAME), which a command of one target cannot give it.
func HasFrontName(spec Spec) bool {
	for _, of := range spec.Of {
		if _, own := spec.own(of); !own {
			return true
		}
	}
	return false
}

// recordedCommits returns, for each of spec's sources (sources' order),
// the commit its build was made at as rec, the result file's record of
// the target, says ("" where it says none).
func recordedCommits(spec Spec, rec result.Target) []string {
	r, ok := spec.Arg.(revisable)
	if !ok {
		return nil
	}
	out := make([]string, len(r.sources()))
	ext := func(from int) {
		if rec.Build == nil {
			return
		}
		for j, e := range rec.Build.Extensions {
			if from+j < len(out) {
				out[from+j] = e.Commit
			}
		}
	}
	switch spec.Arg.(type) {
	case SrcArg:
		if rec.Build != nil && len(out) > 0 {
			out[0] = rec.Build.Commit
		}
		ext(1)
	case SettingsArg:
		ext(0)
	case ProxyArg, PgBouncerArg:
		if p := rec.Pooler; p != nil && p.Build != nil && len(out) > 0 {
			out[0] = p.Build.Commit
		}
	}
	return out
}

// sameCommit says whether two names of a commit agree: one a prefix of
// the other, at least 7 hex digits.
func sameCommit(a, b string) bool {
	if len(a) < 7 || len(b) < 7 {
		return false
	}
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

// BisectBetween makes spec, a target as a result file recorded it
// (result.Target.Spec), ready for bisect between commits good and bad,
// the commits its runs either side of a change recorded (before and
// after, their records of the target): the source whose builds were made
// at those commits — else, for a target of one source, that source — is
// written without a revision, and every other source written without
// one is pinned at the commit its build recorded, so that only the
// bisected source moves. A target built from no source, or none of whose
// sources was built at those commits, is a usage error saying so.
func BisectBetween(spec Spec, before, after result.Target, good, bad string) (Spec, Revisioned, error) {
	r, ok := spec.Arg.(revisable)
	if !ok || len(r.sources()) == 0 {
		return Spec{}, Revisioned{}, usage.Errorf("%s was not built from source: bisect builds src:PATH, settings:,ext=PATH or a proxy: definition with build: at each commit", spec)
	}
	srcs := r.sources()
	rb, ra := recordedCommits(spec, before), recordedCommits(spec, after)
	found := -1
	for i := range srcs {
		if sameCommit(rb[i], good) && sameCommit(ra[i], bad) {
			found = i
			break
		}
	}
	if found < 0 && len(srcs) == 1 {
		found = 0 // the commits were given (--commit, the CI's) for its one source
	}
	if found < 0 {
		var built []string
		for i, s := range srcs {
			built = append(built, fmt.Sprintf("%s at %s and %s", s.Label(), shortCommit(rb[i]), shortCommit(ra[i])))
		}
		return Spec{}, Revisioned{}, usage.Errorf("%s: no source of it was built at %s and %s (%s): the commits name no source to bisect",
			spec, shortCommit(good), shortCommit(bad), strings.Join(built, "; "))
	}
	out := spec
	for i, s := range srcs {
		rev := s.Source.Rev
		switch {
		case i == found:
			rev = ""
		case rev == "" && ra[i] != "":
			rev = ra[i]
		case rev == "":
			return Spec{}, Revisioned{}, usage.Errorf("%s: %s is written without a revision and its build recorded no commit: bisect cannot hold it still while %s moves", spec, s.Label(), srcs[found].Label())
		}
		var err error
		if out, err = AtRevision(out, i, rev); err != nil {
			return Spec{}, Revisioned{}, usage.Wrap(named(spec, err))
		}
	}
	rev, _, err := BisectSource(out)
	return out, rev, err
}

// AllRevisionedError says every source of Spec's target was given its
// revision, so that bisect has none to build at each commit.
type AllRevisionedError struct{ Spec Spec }

func (e *AllRevisionedError) Error() string {
	return fmt.Sprintf("%s: every source has a revision; write the one to bisect without @REV", e.Spec)
}

// shortCommit is a commit's first 7 hex digits, "no commit" for none.
func shortCommit(c string) string {
	switch {
	case c == "":
		return "no commit"
	case len(c) > 7:
		return c[:7]
	}
	return c
}
