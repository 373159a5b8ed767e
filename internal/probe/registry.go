package probe

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/probeopt"
)

// def registers one probe: its ID (name and rank, internal/probeid), the
// flag that turns it off (a default probe) or on, what evidence it adds,
// its own settings' flags, and how it opens. Adding a probe is a file
// with its implementation, its def and an init function that registers
// it, and its line in internal/probeid.
type def struct {
	// id is the probe's name and rank: its evidence in result.Probes,
	// its text writer (internal/report) and HTML view
	// (internal/report/html) are registered under it too. The probes
	// open and run in rising rank (process accounting, which others
	// use, first).
	id probeid.ID
	// on is the default; flag turns the probe off when on, on when off
	// (none when empty: the probe's own flags turn it on).
	on   bool
	flag string
	// evidence says what the probe adds to each step (the flag's help).
	evidence string
	// flags registers the probe's own settings.
	flags func(fs *pflag.FlagSet, o *Options)
	open  func(ctx context.Context, cfg Config, s *Set) (probe, error)
}

// defs are the registered probes, by rank, filled by register when the
// program starts and only read after.
var defs []def

// register adds a probe, and its options' part to internal/probeopt; a
// probe's file calls it from an init function.
func register(d def) {
	probeopt.Register(probeopt.Def{ID: d.id, On: d.on, Flag: d.flag, Evidence: d.evidence, Flags: d.flags})
	i := len(defs)
	for i > 0 && defs[i-1].id.Rank > d.id.Rank {
		i--
	}
	defs = append(defs[:i], append([]def{d}, defs[i:]...)...)
}

// Names lists the probes' names, in the order they run.
func Names() []string {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.id.Name
	}
	return names
}

// Options are the user's choice of probes and their settings
// (internal/probeopt's, under the name the probes use).
type Options = probeopt.Options

// DefaultOptions are the default probes with their default settings.
func DefaultOptions() Options { return probeopt.DefaultOptions() }

// RegisterFlags registers every probe's flags on fs and returns the
// options they fill (probeopt.RegisterFlags).
func RegisterFlags(fs *pflag.FlagSet) *Options { return probeopt.RegisterFlags(fs) }
