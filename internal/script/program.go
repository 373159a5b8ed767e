package script

import (
	"fmt"
	"io"
	"sort"
	"sync"
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

	// Threads is pgbench's -j: clients are dealt to this many threads in
	// contiguous blocks, as pgbench deals them, and the clients of one
	// thread share its random state for the choice of scripts (0, or more
	// than Clients: one thread per client).
	Threads int

	// DebugOutput receives the lines printed by the debug() function
	// (pgbench prints them on stderr). Nil discards them.
	DebugOutput io.Writer

	// ShellStdout and ShellStderr receive what \shell commands write, and
	// \setshell commands' standard error (pgbench's own stdout and stderr).
	// Nil discards it. Clients write to them concurrently.
	ShellStdout, ShellStderr io.Writer
}

// sharedRand is a random state the clients of one thread draw from in turn.
type sharedRand struct {
	mu sync.Mutex
	rs prng
}

// Rand is a pg_prng random sequence.
type Rand struct{ rs prng }

// Float64 is pg_prng_double: uniform in [0, 1).
func (r *Rand) Float64() float64 { return r.rs.double() }

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

	// Seeds drawn from the base sequence as pgbench draws them: one per
	// client, then :default_seed (unless -D defines it), then three per
	// thread (script choice, rate schedule, log sampling).
	clientSeeds  []uint64
	threadSeeds  [][3]uint64
	threadStart  []int // first client of each thread
	sharedChoice []*sharedRand
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
	p.drawSeeds()
	return p, nil
}

// drawSeeds draws the clients' and threads' seeds from the base sequence,
// and deals the clients to threads (pgbench's main).
func (p *Program) drawSeeds() {
	n := p.clients()
	threads := p.opts.Threads
	if threads <= 0 || threads > n {
		threads = n
	}
	var base prng
	base.seed(p.opts.RandomSeed)
	p.clientSeeds = make([]uint64, n)
	for i := range p.clientSeeds {
		p.clientSeeds[i] = base.uint64()
	}
	p.defaultSeed = 0
	if !p.seedDefined {
		p.defaultSeed = int64(base.uint64())
	}
	p.threadSeeds = make([][3]uint64, threads)
	p.threadStart = make([]int, threads+1)
	p.sharedChoice = make([]*sharedRand, threads)
	dealt := 0
	for t := range p.threadSeeds {
		for k := range p.threadSeeds[t] {
			p.threadSeeds[t][k] = base.uint64()
		}
		p.threadStart[t] = dealt
		size := (n - dealt + threads - t - 1) / (threads - t) // as Deal deals
		if size > 1 {
			sh := &sharedRand{}
			sh.rs.seed(p.threadSeeds[t][0])
			p.sharedChoice[t] = sh
		}
		dealt += size
	}
	p.threadStart[threads] = n
}

// Threads returns the number of threads the clients are dealt to.
func (p *Program) Threads() int { return len(p.threadSeeds) }

// Thread returns the thread client id belongs to.
func (p *Program) Thread(id int) int {
	t := sort.SearchInts(p.threadStart, id+1) - 1
	return min(max(t, 0), len(p.threadSeeds)-1)
}

// Deal returns the thread pgbench deals client id to, of clients dealt to
// threads (-j; 0 or more than clients: one per client): contiguous blocks,
// the first threads one client larger when they do not divide evenly.
func Deal(id, clients, threads int) int {
	if threads <= 0 || threads > clients {
		return id
	}
	dealt := 0
	for t := 0; t < threads; t++ {
		dealt += (clients - dealt + threads - t - 1) / (threads - t)
		if id < dealt {
			return t
		}
	}
	return threads - 1
}

// SampleRand returns thread t's random sequence for log sampling
// (pgbench's ts_sample_rs), seeded afresh.
func (p *Program) SampleRand(t int) *Rand {
	r := &Rand{}
	r.rs.seed(p.threadSeeds[t][2])
	return r
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

// NewInterp returns client id's interpreter state, seeded as pgbench seeds
// it: from the base sequence seeded with Options.RandomSeed, client id's
// function random state is draw id+1; :default_seed is draw Clients+1
// (unless -D defines it); the script-choice state is the first of the
// three states of the thread pgbench deals the client to, shared with the
// other clients of that thread.
func (p *Program) NewInterp(id int) *Interp {
	c := &Interp{p: p, id: id, vars: make([]variable, len(p.names))}
	if id < len(p.clientSeeds) {
		c.rs.seed(p.clientSeeds[id])
		c.defaultSeed = p.defaultSeed
		t := p.Thread(id)
		c.choose.seed(p.threadSeeds[t][0])
		c.shared = p.sharedChoice[t]
	} else {
		// A client beyond the run's count (a disturbance session): the
		// draws it would get as one more client with a thread of its own.
		var base prng
		base.seed(p.opts.RandomSeed)
		n := id + 1
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
