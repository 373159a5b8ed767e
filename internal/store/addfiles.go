package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/result"
)

// Pending is a result file, or a micro-benchmark run file, for AddFiles
// to record.
type Pending struct {
	// Path is where the file is; Raw holds its bytes, or is nil for
	// AddFiles to read them from Path.
	Path string
	Raw  []byte
	// File is the file decoded (nil: AddFiles decodes Raw): its target's
	// name picks the label and commit, its server binaries' directory
	// the commit found by git.
	File *result.File
	// Workload is Meta.Workload: a suite cell's CellKey, or empty.
	Workload string
	// Micro marks a micro-benchmark run file (AddMicro); one is also
	// known by its bytes (micro.IsRun) when File is nil.
	Micro bool
}

// AddOptions say under which label and commit AddFiles records each file.
type AddOptions struct {
	// Labels and Commits hold a value per target name, and under "" the
	// one for every other target; a file whose target has neither goes
	// by Add's default label and by the commit found.
	Labels, Commits map[string]string
	// Git finds a commit not given with git in the directory of the
	// target's server binaries (a build of one's own) before trying the
	// CI environment's variables.
	Git bool
	// Getenv reads the CI environment's variables; nil means os.Getenv.
	Getenv func(string) string
}

// Added is what AddFiles stored of one file.
type Added struct {
	// Path is the file's path and Meta what it was recorded under.
	Path string
	Meta Meta
	// CommitFrom says where Meta.Commit was found ("git in DIR",
	// "$GITHUB_SHA"); empty when it was given, or none was found.
	CommitFrom string
	Recorded
}

// AddFiles records the files in order with Add, each under the label and
// commit o gives its target, the commit found (git, the CI environment)
// when o gives none; a micro-benchmark run file with AddMicro, each of
// its targets likewise, the commit found being that of its tree. It
// returns what it stored, also when a file fails: those before it stay
// stored.
func (s *Store) AddFiles(ctx context.Context, files []Pending, o AddOptions) ([]Added, error) {
	var out []Added
	for _, p := range files {
		raw := p.Raw
		if raw == nil {
			var err error
			if raw, err = os.ReadFile(p.Path); err != nil {
				return out, fmt.Errorf("store %s: %w", s.location, err)
			}
		}
		if p.Micro || p.File == nil && micro.IsRun(raw) {
			added, err := s.addMicroFile(ctx, p, raw, o)
			out = append(out, added...)
			if err != nil {
				return out, err
			}
			continue
		}
		f := p.File
		if f == nil {
			var err error
			if f, _, err = checkFile(nil, raw); err != nil {
				return out, err
			}
		}
		name := f.Target.Name
		a := Added{Path: p.Path, Meta: Meta{Label: pick(o.Labels, name), Commit: pick(o.Commits, name), Workload: p.Workload}}
		if a.Meta.Commit == "" {
			a.Meta.Commit, a.CommitFrom = o.findCommit(ctx, f.Target)
		}
		rec, err := s.Add(ctx, nil, raw, a.Meta)
		if err != nil {
			return out, err
		}
		a.Recorded = rec
		out = append(out, a)
	}
	return out, nil
}

// addMicroFile records a micro-benchmark run file, each target under the
// label and commit o gives it, else the commit its tree was at, else the
// CI environment's.
func (s *Store) addMicroFile(ctx context.Context, p Pending, raw []byte, o AddOptions) ([]Added, error) {
	metas := map[string]Added{}
	recs, err := s.AddMicro(ctx, raw, func(t micro.Target) Meta {
		a := Added{Path: p.Path, Meta: Meta{Label: pick(o.Labels, t.Name), Commit: pick(o.Commits, t.Name), Workload: p.Workload}}
		switch {
		case a.Meta.Commit != "":
		case t.Commit != "":
			a.Meta.Commit, a.CommitFrom = t.Commit, "the tree of "+t.Spec
		default:
			a.Meta.Commit, a.CommitFrom = o.findCommit(ctx, result.Target{})
		}
		metas[t.Name] = a
		return a.Meta
	})
	var out []Added
	for _, r := range recs {
		a := metas[r.Target]
		a.Meta.Label = r.Label
		a.Recorded = r
		out = append(out, a)
	}
	return out, err
}

// pick returns name's value, else the one for every target.
func pick(vals map[string]string, name string) string {
	if v, ok := vals[name]; ok && name != "" {
		return v
	}
	return vals[""]
}

// findCommit finds the commit a target measured when none was given: the
// revision its server was built from (a src: target, BuildCommit), else git
// in the directory of its server binaries when o.Git and that is a git
// work tree, else the CI environment's commit variables. It returns the
// commit and where it came from; "" and "" when there is none.
func (o AddOptions) findCommit(ctx context.Context, t result.Target) (string, string) {
	if c := BuildCommit(t.Build); c != "" {
		return c, "the build of " + t.Build.Source
	}
	if dir := t.BinDir; o.Git && dir != "" {
		if c, err := GitCommit(ctx, dir); err == nil {
			return c, "git in " + dir
		}
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if c, v := CommitFromEnv(getenv); c != "" {
		return c, "$" + v
	}
	return "", ""
}

// BuildCommit is the commit a server built from source is recorded under:
// the commit built, with "-dirty" when a working tree differed from it, and
// "+" and 8 hex digits of a hash of its patches when it was patched (the
// same commit with other patches is another point of the series); "" when
// the build was of a plain directory or there is none.
func BuildCommit(b *result.Build) string {
	if b == nil || b.Commit == "" {
		return ""
	}
	c := b.Commit
	if b.Dirty {
		c += "-dirty"
	}
	if len(b.Patches) > 0 {
		h := sha256.New()
		for _, p := range b.Patches {
			h.Write([]byte(p.SHA256))
		}
		c += "+" + hex.EncodeToString(h.Sum(nil))[:8]
	}
	return c
}
