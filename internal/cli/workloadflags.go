package cli

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/workload"
)

// workloadFlags say what every client runs: pgbench's -b -f -S -N -D -M.
type workloadFlags struct {
	scripts  []scriptArg // -b, -f, -S, -N in command-line order, as pgbench numbers them
	defines  map[string]string
	protocol string
	seed     string
}

func (w *workloadFlags) register(fs *pflag.FlagSet) {
	w.defines = map[string]string{}
	fs.VarP(scriptFlag{&w.scripts, "b", ""}, "builtin", "b", "built-in script NAME[@WEIGHT]: tpcb-like, simple-update, select-only (default select-only)")
	fs.VarP(scriptFlag{&w.scripts, "f", ""}, "file", "f", "script file FILE[@WEIGHT] in pgbench's language")
	fs.VarPF(scriptFlag{&w.scripts, "b", "select-only"}, "select-only", "S", "same as -b select-only").NoOptDefVal = "true"
	fs.VarPF(scriptFlag{&w.scripts, "b", "simple-update"}, "skip-some-updates", "N", "same as -b simple-update").NoOptDefVal = "true"
	fs.VarP(defines{w.defines}, "define", "D", "script variable NAME=VALUE (repeatable)")
	fs.StringVarP(&w.protocol, "protocol", "M", "prepared", "how SQL is sent: simple, extended or prepared")
	fs.StringVar(&w.seed, "random-seed", "time", "seed of the scripts' random functions: time, rand, or an integer")
}

// scriptArg is one -b or -f argument.
type scriptArg struct{ kind, arg string }

// scriptFlag appends to one list shared by -b, -f, -S and -N, so the scripts
// keep the order they were given in (pgbench's script numbers and the order
// its weighted choice walks). With fixed set, it is a boolean alias of
// "-b fixed".
type scriptFlag struct {
	list  *[]scriptArg
	kind  string
	fixed string
}

func (f scriptFlag) Set(v string) error {
	if f.fixed != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return err
		}
		if on {
			*f.list = append(*f.list, scriptArg{f.kind, f.fixed})
		}
		return nil
	}
	*f.list = append(*f.list, scriptArg{f.kind, v})
	return nil
}

func (f scriptFlag) String() string { return "" }

func (f scriptFlag) Type() string {
	if f.fixed != "" {
		return "bool"
	}
	return "string"
}

// loadScript parses one -b or -f argument and names it for the workload's name.
func loadScript(a scriptArg) (*script.Script, string, error) {
	arg, weight, err := splitWeight(a.arg)
	if err != nil {
		return nil, "", Usagef("-%s %v", a.kind, err)
	}
	var s *script.Script
	name := strings.TrimSuffix(baseName(arg), ".sql")
	if a.kind == "b" {
		b, err := workload.FindBuiltin(arg)
		if err != nil {
			return nil, "", Usagef("-b: %v", err)
		}
		if s, err = script.Parse("builtin:"+b.Name, b.Script); err != nil {
			return nil, "", fmt.Errorf("built-in %s: %w", b.Name, err) // a bug, not the user's
		}
		name = b.Name
	} else {
		src, err := os.ReadFile(arg)
		if err != nil {
			return nil, "", Usagef("-f: cannot read script: %v", err)
		}
		if s, err = script.Parse(arg, string(src)); err != nil {
			return nil, "", &UsageError{Err: err}
		}
	}
	s.Weight = weight
	return s, name, nil
}

// loaded is a parsed workload.
type loaded struct {
	Scripts  []*script.Script
	Name     string
	Protocol engine.Protocol
	Seed     uint64
	Builtin  bool // only built-in scripts: pgbench tables are required
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

func (w *workloadFlags) load() (*loaded, error) {
	l := &loaded{Builtin: true}
	p, err := engine.ParseProtocol(w.protocol)
	if err != nil {
		return nil, Usagef("-M: %v", err)
	}
	l.Protocol = p
	if l.Seed, err = resolveSeed(w.seed); err != nil {
		return nil, Usagef("--random-seed: %v", err)
	}
	args := w.scripts
	if len(args) == 0 {
		args = []scriptArg{{"b", "select-only"}}
	}
	var names []string
	for _, a := range args {
		s, name, err := loadScript(a)
		if err != nil {
			return nil, err
		}
		l.Scripts = append(l.Scripts, s)
		names = append(names, name)
		if a.kind == "f" {
			l.Builtin = false
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
		return nil, Usagef("the total weight of the scripts is 0")
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
			return &UsageError{Err: err}
		}
		return nil
	}
	for _, c := range s.Commands {
		if c.Kind == script.KindStartPipeline {
			return Usagef("%s:%d: cannot use pipeline mode with the simple query protocol (use -M extended or -M prepared)", s.Name, c.Line)
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

// resolveSeed turns pgbench's --random-seed forms into a number.
func resolveSeed(s string) (uint64, error) {
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

func (l *loaded) resultScripts() []result.Script {
	var out []result.Script
	for _, s := range l.Scripts {
		out = append(out, result.Script{Name: s.Name, Weight: s.Weight, Source: s.Source})
	}
	return out
}
