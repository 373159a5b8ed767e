package script

import (
	"fmt"
	"io"
	"sort"
)

// Options are run-wide inputs shared by every client.
type Options struct {
	Scale      int
	RandomSeed uint64            // base seed (the engine resolves pgbench's "time"/"rand"/N forms before)
	Defines    map[string]string // -D name=value

	// Clients is the number of clients of the run (0 means 1). pgbench draws
	// every client's random state, then :default_seed, then each thread's
	// states from one base sequence; the count fixes where each draw falls.
	Clients int

	// DebugOutput receives the lines printed by the debug() function
	// (pgbench prints them on stderr). Nil discards them.
	DebugOutput io.Writer
}

// Program is the set of weighted scripts of one run, sharing a variable namespace.
type Program struct {
	scripts     []*Script
	opts        Options
	names       []string       // client variable names
	index       map[string]int // name -> client variable index
	valid       []bool         // valid_variable_name for each
	maps        [][]int32      // per script: script-local variable index -> client variable index
	totalWeight int64
	defines     []define
	defaultSeed int64 // when not given with -D
	seedDefined bool
}

type define struct {
	idx int
	val string
}

// NewProgram links scripts into a program and validates run-wide options.
func NewProgram(scripts []*Script, opts Options) (*Program, error) {
	if len(scripts) == 0 {
		return nil, fmt.Errorf("no script to run")
	}
	if len(scripts) > 128 {
		return nil, fmt.Errorf("at most %d SQL scripts are allowed", 128)
	}
	p := &Program{scripts: scripts, opts: opts, index: make(map[string]int)}
	intern := func(name string) int {
		if i, ok := p.index[name]; ok {
			return i
		}
		p.names = append(p.names, name)
		p.valid = append(p.valid, validVariableName(name))
		p.index[name] = len(p.names) - 1
		return len(p.names) - 1
	}
	for _, b := range []string{"scale", "client_id", "default_seed", "random_seed"} {
		intern(b)
	}
	names := make([]string, 0, len(opts.Defines))
	for n := range opts.Defines {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !validVariableName(n) {
			return nil, fmt.Errorf("option: invalid variable name: \"%s\"", n)
		}
		p.defines = append(p.defines, define{idx: intern(n), val: opts.Defines[n]})
	}
	for _, s := range scripts {
		if s.Weight < 0 {
			return nil, fmt.Errorf("weight specification out of range (0 .. %d): %d", int32(^uint32(0)>>1), s.Weight)
		}
		p.totalWeight += int64(s.Weight)
		m := make([]int32, len(s.vars.names))
		for i, n := range s.vars.names {
			m[i] = int32(intern(n))
		}
		p.maps = append(p.maps, m)
	}
	if p.totalWeight == 0 {
		return nil, fmt.Errorf("total script weight must not be zero")
	}
	_, p.seedDefined = opts.Defines["default_seed"]
	return p, nil
}

// Scripts returns the program's scripts, in the order given.
func (p *Program) Scripts() []*Script { return p.scripts }

// validVariableName is pgbench's valid_variable_name.
func validVariableName(name string) bool {
	if name == "" {
		return false
	}
	c := name[0]
	if !(c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !(name[i] >= 0x80 || isAlnum(name[i])) {
			return false
		}
	}
	return true
}

func (p *Program) clients() int {
	if p.opts.Clients <= 0 {
		return 1
	}
	return p.opts.Clients
}

// NewClient returns client id's interpreter state, seeded as pgbench seeds
// it: from the base sequence seeded with Options.RandomSeed, client id's
// function random state is draw id+1; :default_seed is draw Clients+1; the
// script-choice state is the first of the three states of the thread that
// pgbench would give this client when running one thread per client.
func (p *Program) NewClient(id int) *Client {
	c := &Client{p: p, id: id, vars: make([]variable, len(p.names))}
	var base prng
	base.seed(p.opts.RandomSeed)
	n := max(p.clients(), id+1)
	// Clients 0..n-1 take draws 0..n-1, :default_seed takes draw n, and
	// thread t (one per client) takes draws n+1+3t .. n+3+3t.
	for i := 0; i <= n+1+3*id; i++ {
		d := base.uint64()
		switch {
		case i == id:
			c.rs.seed(d)
		case i == n:
			c.defaultSeed = int64(d)
		case i == n+1+3*id:
			c.choose.seed(d)
		}
	}
	defaultSeed := c.defaultSeed
	c.txRS = c.rs
	// variables: -D first (as strings), then the built-ins pgbench defines
	// unless -D did.
	for _, d := range p.defines {
		c.setString(d.idx, d.val)
	}
	if !c.vars[p.index["scale"]].defined {
		c.setValue(p.index["scale"], intValue(int64(p.opts.Scale)))
	}
	if !c.vars[p.index["client_id"]].defined {
		c.setValue(p.index["client_id"], intValue(int64(id)))
	}
	if !c.vars[p.index["default_seed"]].defined {
		c.setValue(p.index["default_seed"], intValue(defaultSeed))
	}
	if !c.vars[p.index["random_seed"]].defined {
		c.setValue(p.index["random_seed"], intValue(int64(p.opts.RandomSeed)))
	}
	return c
}
