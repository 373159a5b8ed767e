package probe

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/usage"
)

// def registers one probe: its name, the flag that turns it off (a
// default probe) or on, what evidence it adds, its own settings' flags,
// and how it opens. Adding a probe is a file with its implementation and
// its def, and one line in defs.
type def struct {
	// name is also its evidence's name in result.Probes, and the name its
	// text writer (internal/report) and HTML view (internal/report/html)
	// are registered by.
	name string
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

// defs is the registry, in the order the probes run and report.
var defs = []def{processDef, countersDef, waitsDef, locksDef, statementsDef, profileDef, instructionsDef, upstreamsDef}

// Names lists the probes' names, in the order they run.
func Names() []string {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.name
	}
	return names
}

// Options are the user's choice of probes and their settings.
type Options struct {
	// None turns every probe off (--no-probes).
	None bool
	// Enabled turns probes on or off by name; a probe it does not name
	// has its default.
	Enabled map[string]bool

	WaitSource    string  // auto, pg_wait_sampling or pg_stat_activity
	WaitHz        float64 // pg_stat_activity sampling frequency; default 20
	LockSnapshots int     // pg_locks snapshots per step; default 4
	// ProfileDir is where the profile probe writes its pprof files
	// (default results/profile-<UTC time>; an A/B runner gives each
	// target its own).
	ProfileDir string
	// PoolerPID, when set, is a pooler on this host accounted apart.
	PoolerPID int
	// CacheSim adds callgrind's cache and branch simulation to counting
	// instructions (--count instructions,cache).
	CacheSim bool
}

// DefaultOptions are the default probes with their default settings.
func DefaultOptions() Options {
	return Options{WaitSource: WaitSourceAuto, WaitHz: defaultWaitHz, LockSnapshots: defaultLockSnapshots}
}

// On reports whether the probe called name runs.
func (o Options) On(name string) bool {
	if o.None {
		return false
	}
	if on, ok := o.Enabled[name]; ok {
		return on
	}
	for _, d := range defs {
		if d.name == name {
			return d.on
		}
	}
	return false
}

// Clone returns a copy of o that shares nothing with it.
func (o Options) Clone() Options {
	if o.Enabled != nil {
		m := make(map[string]bool, len(o.Enabled))
		for k, v := range o.Enabled {
			m[k] = v
		}
		o.Enabled = m
	}
	return o
}

// Set turns the probe called name on or off.
func (o *Options) Set(name string, on bool) {
	if o.Enabled == nil {
		o.Enabled = map[string]bool{}
	}
	o.Enabled[name] = on
}

// Any reports whether any probe runs.
func (o Options) Any() bool {
	for _, d := range defs {
		if o.On(d.name) {
			return true
		}
	}
	return false
}

// withDefaults fills the settings left at zero.
func (o Options) withDefaults() Options {
	if o.WaitHz <= 0 {
		o.WaitHz = defaultWaitHz
	}
	if o.LockSnapshots <= 0 {
		o.LockSnapshots = defaultLockSnapshots
	}
	if o.WaitSource == "" {
		o.WaitSource = WaitSourceAuto
	}
	if (o.On(NameProfile) || o.On(NameInstructions)) && o.ProfileDir == "" {
		o.ProfileDir = filepath.Join("results", "profile-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	return o
}

// Check finds what cannot work in o, as usage errors naming the flag.
func (o Options) Check() error {
	switch {
	case o.WaitSource != WaitSourceAuto && o.WaitSource != WaitSourceWaitSampling && o.WaitSource != WaitSourceStatActivity:
		return usage.Errorf("--wait-source %q: want auto, pg_wait_sampling or pg_stat_activity", o.WaitSource)
	case o.WaitHz <= 0 || o.WaitHz > 1000:
		return usage.Errorf("--wait-hz must be between 0 and 1000")
	case o.LockSnapshots < 1:
		return usage.Errorf("--lock-snapshots must be at least 1")
	case o.None && o.Enabled[NameProfile]:
		return usage.Errorf("--profile is a probe: it cannot go with --no-probes")
	case o.None && o.Enabled[NameInstructions]:
		return usage.Errorf("--count instructions is a probe: it cannot go with --no-probes")
	case o.On(NameInstructions) && o.On(NameProfile):
		return usage.Errorf("--profile samples the server with perf, which under Valgrind sees Valgrind: --count instructions writes a profile of the instructions itself")
	}
	return nil
}

// RegisterFlags registers every probe's flags on fs — --no-probes, the
// flag that turns each probe off or on, and each probe's settings — and
// returns the options they fill.
func RegisterFlags(fs *pflag.FlagSet) *Options {
	o := DefaultOptions()
	opt := &o
	fs.BoolVar(&opt.None, "no-probes", false, "run no server-side probe (and so no bottleneck verdict)")
	for _, d := range defs {
		if d.flag == "" {
			continue
		}
		usage := "no " + d.evidence
		if !d.on {
			usage = d.evidence
		}
		fs.VarPF(enableFlag{opt, d.name, !d.on}, d.flag, "", usage).NoOptDefVal = "true"
	}
	for _, d := range defs {
		if d.flags != nil {
			d.flags(fs, opt)
		}
	}
	return opt
}

// enableFlag is a probe's on/off flag: given (true), it sets the probe to
// turnsOn.
type enableFlag struct {
	o       *Options
	name    string
	turnsOn bool
}

func (f enableFlag) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return errors.New("want true or false")
	}
	f.o.Set(f.name, b == f.turnsOn)
	return nil
}

func (f enableFlag) String() string { return "false" }
func (f enableFlag) Type() string   { return "bool" }
