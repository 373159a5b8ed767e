package workload

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/usage"
)

// Spec is the workload as the user gave it: pgbench's -b, -f, -S, -N (in
// command-line order, as pgbench numbers the scripts), -D, -M and
// --random-seed.
type Spec struct {
	Scripts  []ScriptArg
	Defines  map[string]string
	Protocol string // simple, extended or prepared; "" is the default, prepared (Loaded.ProtocolDefault)
	Seed     string // time, rand or an integer; default time
}

// ScriptArg is one script argument: Kind "b" (a built-in NAME[@WEIGHT]),
// "f" (a file FILE[@WEIGHT]) or "sql" (Source, the script's text, named
// Arg; Weight its weight: a suite's inline script).
type ScriptArg struct {
	Kind, Arg string
	Source    string
	Weight    int
}

// loadScript parses one -b or -f argument and names it for the workload's name.
func loadScript(a ScriptArg) (*script.Script, string, string, error) {
	if a.Kind == "sql" {
		s, err := script.Parse(a.Arg, a.Source)
		if err != nil {
			return nil, "", "", usage.Wrap(err)
		}
		s.Weight = a.Weight
		return s, a.Arg, a.Arg, nil
	}
	arg, weight, err := splitWeight(a.Arg)
	if err != nil {
		return nil, "", "", usage.Errorf("-%s %v", a.Kind, err)
	}
	var s *script.Script
	name := strings.TrimSuffix(baseName(arg), ".sql")
	desc := arg
	if a.Kind == "b" {
		b, err := FindBuiltin(arg)
		if err != nil {
			return nil, "", "", usage.Errorf("-b: %v", err)
		}
		if s, err = script.Parse("builtin:"+b.Name, b.Script); err != nil {
			return nil, "", "", fmt.Errorf("built-in %s: %w", b.Name, err) // a bug, not the user's
		}
		name = b.Name
		desc = b.Description
	} else {
		var src []byte
		var err error
		if arg == "-" {
			src, err = io.ReadAll(os.Stdin) // pgbench reads "-f -" from its standard input
		} else {
			src, err = os.ReadFile(arg)
		}
		if err != nil {
			return nil, "", "", usage.Errorf("-f: cannot read script: %v", err)
		}
		if s, err = script.Parse(arg, string(src)); err != nil {
			return nil, "", "", usage.Wrap(err)
		}
	}
	s.Weight = weight
	return s, name, desc, nil
}

// Loaded is a parsed workload, ready to run.
type Loaded struct {
	Scripts  []*script.Script
	Name     string // the scripts' names joined by "+": "select-only", "tpcb-like+my"
	Protocol engine.Protocol
	Seed     uint64
	Defines  map[string]string
	// Builtin says a built-in script is among them: pgbench's tables are
	// required and the scale is read from them, as pgbench does.
	Builtin bool
	// ProtocolDefault says the protocol was not asked for (no -M): a
	// statement the server cannot prepare for its parameters' types then
	// runs with the simple protocol (CheckPrepare), as pgbench's default.
	ProtocolDefault bool

	descs []string // pgbench's description of each script
}

// UsesPgbenchTables says the scripts use pgbench's tables: a built-in
// script is among them, or an SQL command names one (pgbench_accounts,
// pgbench_branches, ...). An ephemeral cluster is given pgbench's data
// only then.
func (l *Loaded) UsesPgbenchTables() bool {
	if l.Builtin {
		return true
	}
	for _, s := range l.Scripts {
		for _, c := range s.Commands {
			if c.Kind == script.KindSQL && strings.Contains(strings.ToLower(c.Text), "pgbench_") {
				return true
			}
		}
	}
	return false
}

func splitWeight(arg string) (string, int, error) {
	i := strings.LastIndexByte(arg, '@')
	if i < 0 {
		return arg, 1, nil
	}
	w, err := strconv.Atoi(arg[i+1:])
	if err != nil || w < 0 {
		return "", 0, fmt.Errorf("%q: weight after @ must be a non-negative integer", arg)
	}
	return arg[:i], w, nil
}

// Load parses the workload's scripts (a bad script is a usage error naming
// its file, line and column) and checks them against the protocol; a
// protocol or seed it cannot read is an OptionError. With no script it
// is pgbench's select-only.
func Load(w Spec) (*Loaded, error) {
	l := &Loaded{Defines: w.Defines}
	if w.Protocol == "" {
		w.Protocol, l.ProtocolDefault = "prepared", true
	}
	p, err := engine.ParseProtocol(w.Protocol)
	if err != nil {
		return nil, optionError("Protocol", err)
	}
	l.Protocol = p
	if l.Seed, err = ResolveSeed(w.Seed); err != nil {
		return nil, optionError("Seed", err)
	}
	args := w.Scripts
	if len(args) == 0 {
		args = []ScriptArg{{Kind: "b", Arg: "select-only"}}
	}
	var names []string
	for _, a := range args {
		s, name, desc, err := loadScript(a)
		if err != nil {
			return nil, err
		}
		l.Scripts = append(l.Scripts, s)
		l.descs = append(l.descs, desc)
		names = append(names, name)
		if a.Kind == "b" {
			l.Builtin = true
		}
	}
	total := 0
	for _, s := range l.Scripts {
		total += s.Weight
		if err := checkProtocol(s, l.Protocol); err != nil {
			return nil, err
		}
	}
	if total == 0 {
		return nil, usage.Errorf("total script weight must not be zero") // pgbench's words
	}
	l.Name = strings.Join(names, "+")
	return l, nil
}

// checkProtocol refuses, before anything runs, what pgbench would only find
// when a client reaches it: a pipeline in simple mode, too many parameters
// for the extended protocol.
func checkProtocol(s *script.Script, p engine.Protocol) error {
	if p != engine.Simple {
		if err := s.ExtendedError(); err != nil {
			return usage.Wrap(err)
		}
		return nil
	}
	for _, c := range s.Commands {
		if c.Kind == script.KindStartPipeline {
			return usage.Errorf("%s:%d: cannot use pipeline mode with the simple query protocol (use -M extended or -M prepared)", s.Name, c.Line)
		}
	}
	return nil
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// ResolveSeed turns pgbench's --random-seed forms into a number.
func ResolveSeed(s string) (uint64, error) {
	switch s {
	case "time", "":
		return uint64(time.Now().UnixNano()), nil
	case "rand":
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return 0, err
		}
		return binary.LittleEndian.Uint64(b[:]), nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		if i, err2 := strconv.ParseInt(s, 10, 64); err2 == nil {
			return uint64(i), nil
		}
		return 0, fmt.Errorf("%q is not time, rand or an integer", s)
	}
	return n, nil
}

// ResultScripts are the scripts as the result file records them.
func (l *Loaded) ResultScripts() []result.Script {
	var out []result.Script
	for i, s := range l.Scripts {
		rs := result.Script{Name: s.Name, Weight: s.Weight, Source: s.Source}
		if i < len(l.descs) {
			rs.Description = l.descs[i]
		}
		for _, c := range s.Commands {
			if c.SimpleProtocol() && l.Protocol != engine.Simple {
				rs.SimpleProtocolLines = append(rs.SimpleProtocolLines, c.Line)
			}
		}
		out = append(out, rs)
	}
	return out
}
