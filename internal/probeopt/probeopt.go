// Package probeopt is the user's choice of server-side probes and their
// settings, and the flags that fill it: what a command line asks of the
// probes, apart from the probes themselves (internal/probe), so that the
// commands parse it without importing the code that samples the server
// (internal/cli may not; the runners hand the options to the probes).
// Each probe registers here, from its own file, its name, default, flag
// and settings' flags (Register).
package probeopt

import (
	"errors"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/usage"
)

// Wait-event sources.
const (
	WaitSourceAuto         = "auto"             // pg_wait_sampling when usable, else pg_stat_activity
	WaitSourceWaitSampling = "pg_wait_sampling" // the extension's in-server profile
	WaitSourceStatActivity = "pg_stat_activity" // sampled from a connection of the probe's own
)

// CacheSimOptions are callgrind's options for the cache and branch
// simulation of --count instructions,cache, with the caches it models:
// the edge gives them to the servers counted under Valgrind, a
// micro-benchmark's counting to its program.
func CacheSimOptions() []string {
	return []string{"--cache-sim=yes", "--branch-sim=yes", "--I1=" + simI1, "--D1=" + simD1, "--LL=" + simLL}
}

// The caches CacheSimOptions models: size, associativity, line size.
const (
	simI1 = "32768,8,64"
	simD1 = "32768,8,64"
	simLL = "8388608,16,64"
)

// Defaults of the probes' settings.
const (
	DefaultWaitHz        = 20
	DefaultLockSnapshots = 4
)

// Def is what a probe registers about itself: its ID (its name, which its
// option is keyed by, and its rank, the order of the flags), the flag that
// turns it off (a default probe) or on, what evidence it adds (the flag's
// help), and its own settings' flags.
type Def struct {
	ID       probeid.ID
	On       bool
	Flag     string // none when empty: the probe's own flags turn it on
	Evidence string
	Flags    func(fs *pflag.FlagSet, o *Options)
}

// registry holds every probe's Def, by Rank, filled by Register when the
// program starts and only read after.
var registry []Def

// Register adds a probe's Def; it is called from the probe's own file (an
// init function), once per probe. A name registered twice panics.
func Register(d Def) {
	for _, o := range registry {
		if o.ID.Name == d.ID.Name {
			panic("probeopt: probe " + d.ID.Name + " registered twice")
		}
	}
	registry = append(registry, d)
	sort.SliceStable(registry, func(i, j int) bool { return registry[i].ID.Rank < registry[j].ID.Rank })
}

// Names lists the probes' names, in the order they run.
func Names() []string {
	names := make([]string, len(registry))
	for i, d := range registry {
		names[i] = d.ID.Name
	}
	return names
}

// Count is what --count (and a suite's count:) asks to count: the
// server's instructions (and a pooler's in front of it), with Cache the
// cache and branch simulation too (which counts the instructions as
// well), or with Pooler the pooler's instructions alone, its servers
// running natively.
type Count struct {
	Instructions, Cache, Pooler bool
}

// countWants is what ParseCount takes, for its errors.
const countWants = "want instructions, instructions,cache, or pooler (the pooler's instructions alone)"

// ParseCount reads --count's value: instructions, or instructions,cache
// (cache alone counts the instructions too), or pooler (a pooler's or
// proxy's instructions alone: the servers it fronts run natively, fast,
// and count nothing); "" counts nothing.
func ParseCount(v string) (Count, error) {
	var c Count
	if strings.TrimSpace(v) == "" {
		return c, nil
	}
	for _, w := range strings.Split(v, ",") {
		switch strings.TrimSpace(w) {
		case "instructions":
		case "cache":
			c.Cache = true
		case "pooler":
			c.Pooler = true
		default:
			return Count{}, errors.New(countWants)
		}
	}
	if c.Pooler && c.Cache {
		return Count{}, errors.New("pooler counts the pooler alone, and cache simulates the servers' caches: give one of them")
	}
	c.Instructions = true
	return c, nil
}

// String writes the count back as ParseCount reads it.
func (c Count) String() string {
	switch {
	case c.Pooler:
		return "pooler"
	case c.Cache:
		return "instructions,cache"
	case c.Instructions:
		return "instructions"
	}
	return ""
}

// SetCount turns counting on as c says (nothing for a zero Count).
func (o *Options) SetCount(c Count) {
	if !c.Instructions {
		return
	}
	o.Set(probeid.Instructions.Name, true)
	o.CacheSim = o.CacheSim || c.Cache
	o.PoolerOnly = o.PoolerOnly || c.Pooler
}

// CountFlag is --count as a flag filling o (run's and ab's).
func CountFlag(o *Options) pflag.Value { return countFlag{o.SetCount} }

// CountInto is --count as a flag filling c (suite's, which replaces the
// suite file's count:).
func CountInto(c *Count) pflag.Value { return countFlag{func(v Count) { *c = v }} }

// countFlag is --count: what to count, a comma list of "instructions"
// and "cache" (which counts the instructions too), read by ParseCount and
// handed to set.
type countFlag struct{ set func(Count) }

func (f countFlag) Set(v string) error {
	c, err := ParseCount(v)
	if err != nil {
		return err
	}
	if !c.Instructions {
		return errors.New(countWants)
	}
	f.set(c)
	return nil
}

func (f countFlag) String() string { return "" }
func (f countFlag) Type() string   { return "what" }

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
	// PoolerOnly counts a pooler's instructions alone (--count pooler):
	// the servers it fronts run natively and are not counted.
	PoolerOnly bool
}

// DefaultOptions are the default probes with their default settings.
func DefaultOptions() Options {
	return Options{WaitSource: WaitSourceAuto, WaitHz: DefaultWaitHz, LockSnapshots: DefaultLockSnapshots}
}

// On reports whether the probe called name runs.
func (o Options) On(name string) bool {
	if o.None {
		return false
	}
	if on, ok := o.Enabled[name]; ok {
		return on
	}
	for _, d := range registry {
		if d.ID.Name == name {
			return d.On
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
	for _, d := range registry {
		if o.On(d.ID.Name) {
			return true
		}
	}
	return false
}

// WithDefaults fills the settings left at zero.
func (o Options) WithDefaults() Options {
	if o.WaitHz <= 0 {
		o.WaitHz = DefaultWaitHz
	}
	if o.LockSnapshots <= 0 {
		o.LockSnapshots = DefaultLockSnapshots
	}
	if o.WaitSource == "" {
		o.WaitSource = WaitSourceAuto
	}
	if (o.On(probeid.Profile.Name) || o.On(probeid.Instructions.Name)) && o.ProfileDir == "" {
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
	case o.None && o.Enabled[probeid.Profile.Name]:
		return usage.Errorf("--profile is a probe: it cannot go with --no-probes")
	case o.None && o.Enabled[probeid.Instructions.Name]:
		return usage.Errorf("--count instructions is a probe: it cannot go with --no-probes")
	case o.On(probeid.Instructions.Name) && o.On(probeid.Profile.Name):
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
	for _, d := range registry {
		if d.Flag == "" {
			continue
		}
		usage := "no " + d.Evidence
		if !d.On {
			usage = d.Evidence
		}
		fs.VarPF(enableFlag{opt, d.ID.Name, !d.On}, d.Flag, "", usage).NoOptDefVal = "true"
	}
	for _, d := range registry {
		if d.Flags != nil {
			d.Flags(fs, opt)
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
