package probe

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// CallgrindDump is one callgrind dump of one process: what it executed
// between two dumps (or a zero and a dump), per function and per call.
type CallgrindDump struct {
	PID     int
	Trigger string // "dump HINT" for a dump asked for with that hint
	// Totals are the dump's totals per event (Ir, and with
	// --collect-systime sysCount and sysTime).
	Totals map[string]uint64
	// Self is each function's own cost, Calls the inclusive cost of the
	// calls from one function to another, as callgrind measured them.
	Self  map[CallgrindFunc]Cost
	Calls map[[2]CallgrindFunc]Cost
}

// Cost is what callgrind counted of code: instructions (Ir) and system
// calls (sysCount, with --collect-systime).
type Cost struct{ Ir, Syscalls uint64 }

func (c Cost) add(o Cost) Cost { return Cost{c.Ir + o.Ir, c.Syscalls + o.Syscalls} }

func (c Cost) sub(o Cost) Cost {
	return Cost{c.Ir - min(o.Ir, c.Ir), c.Syscalls - min(o.Syscalls, c.Syscalls)}
}

// CallgrindFunc is a function as callgrind names it, with the object file
// it is in.
type CallgrindFunc struct{ Name, Object string }

// ParseCallgrind reads a dump in callgrind's format (name compression
// "(id) name" included; positions are skipped) and keeps the instruction
// event, Ir, per function and call.
func ParseCallgrind(r io.Reader) (*CallgrindDump, error) {
	d := &CallgrindDump{Totals: map[string]uint64{}, Self: map[CallgrindFunc]Cost{}, Calls: map[[2]CallgrindFunc]Cost{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var events []string
	npos := 1
	names := map[string]map[string]string{} // kind ("fn", "ob", "fl") -> id -> name
	resolve := func(kind, v string) string {
		if names[kind] == nil {
			names[kind] = map[string]string{}
		}
		if !strings.HasPrefix(v, "(") {
			return v
		}
		id, rest, _ := strings.Cut(v[1:], ")")
		if rest = strings.TrimSpace(rest); rest != "" {
			names[kind][id] = rest
			return rest
		}
		return names[kind][id]
	}
	var ob, cob, fn string
	var cfn string
	callPending := false
	ir, sys := -1, -1 // indexes of Ir and sysCount among the events
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if s == "" || s[0] == '#' {
			continue
		}
		c := s[0]
		if c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*' {
			f := strings.Fields(s)
			if len(f) < npos {
				return nil, fmt.Errorf("callgrind line %d: cost line %q has no position", line, s)
			}
			event := func(i int) (uint64, error) {
				if i < 0 || npos+i >= len(f) {
					return 0, nil
				}
				return strconv.ParseUint(f[npos+i], 10, 64)
			}
			var v Cost
			var err1, err2 error
			v.Ir, err1 = event(ir)
			v.Syscalls, err2 = event(sys)
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("callgrind line %d: %q: %v", line, s, err)
			}
			self := CallgrindFunc{fn, ob}
			if callPending {
				k := [2]CallgrindFunc{self, {cfn, cob}}
				d.Calls[k] = d.Calls[k].add(v)
				callPending = false
				// callgrind writes cob= only for a callee in another
				// object than the caller's: it holds for one call.
				cob = ob
			} else {
				d.Self[self] = d.Self[self].add(v)
			}
			continue
		}
		key, val, ok := strings.Cut(s, "=")
		if !ok {
			key, val, ok = strings.Cut(s, ":")
			if !ok {
				continue
			}
			val = strings.TrimSpace(val)
			switch key {
			case "events":
				events = strings.Fields(val)
				for i, e := range events {
					switch e {
					case "Ir":
						ir = i
					case "sysCount":
						sys = i
					}
				}
			case "positions":
				npos = len(strings.Fields(val))
			case "pid":
				d.PID, _ = strconv.Atoi(val)
			case "desc":
				if t, ok := strings.CutPrefix(val, "Trigger:"); ok {
					d.Trigger = strings.TrimSpace(t)
				}
			case "totals":
				for i, f := range strings.Fields(val) {
					if i < len(events) {
						d.Totals[events[i]], _ = strconv.ParseUint(f, 10, 64)
					}
				}
			}
			continue
		}
		switch key {
		case "ob":
			ob = resolve("ob", val)
			cob = ob
		case "fn":
			fn = resolve("fn", val)
			cob = ob
		case "cob":
			cob = resolve("ob", val)
		case "cfn", "cfi", "cfl":
			if key == "cfn" {
				cfn = resolve("fn", val)
			} else {
				resolve("fl", val)
			}
		case "fl", "fi", "fe":
			resolve("fl", val)
		case "calls":
			callPending = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if ir < 0 {
		return nil, fmt.Errorf("callgrind dump without the Ir event (events: %v)", events)
	}
	return d, nil
}

// Inclusive returns each function's cost with that of its callees (its
// own cost plus that of the calls it made).
func (d *CallgrindDump) Inclusive() map[CallgrindFunc]Cost {
	m := map[CallgrindFunc]Cost{}
	for f, v := range d.Self {
		m[f] = m[f].add(v)
	}
	for k, v := range d.Calls {
		if k[0] != k[1] {
			m[k[0]] = m[k[0]].add(v)
		}
	}
	return m
}

// Total is the dump's cost: every function's own.
func (d *CallgrindDump) Total() Cost {
	var t Cost
	for _, v := range d.Self {
		t = t.add(v)
	}
	return t
}

// Inside is the cost of the function named (in any object) with that of
// everything it called: the part of the total that ran inside it.
func (d *CallgrindDump) Inside(name string) Cost {
	var c Cost
	for f, v := range d.Inclusive() {
		if f.Name == name {
			c = c.add(v)
		}
	}
	return c
}

// minStackShare is the smallest share of a dump's instructions a
// reconstructed stack is followed for; what is below it stays with the
// caller.
const minStackShare = 1e-5

// CallgrindProfile turns dumps into a pprof profile of instructions. Each
// function's own instructions are exact; the stacks are rebuilt from the
// call graph callgrind keeps (the cost of each call from one function to
// another), assuming a function costs the same per call whoever calls it,
// as gprof does: a function's cost on a path is its cost shared among its
// callers in proportion to what each call cost. Every sample carries the
// process's pid and kind (kinds names them).
//
// The functions named in exclude are left out with all they called, as
// Inside takes them off the count.
func CallgrindProfile(dumps []*CallgrindDump, kinds map[int]string, step string, exclude ...string) (*profile.Profile, error) {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "instructions", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "instructions", Unit: "count"},
		Period:     1,
		Comments:   []string{"valgrind --tool=callgrind, counted in the measured window; stacks rebuilt from callgrind's call graph by pgscale"},
	}
	mappings := map[string]*profile.Mapping{}
	locs := map[CallgrindFunc]*profile.Location{}
	funcs := map[string]*profile.Function{}
	location := func(f CallgrindFunc) *profile.Location {
		if l := locs[f]; l != nil {
			return l
		}
		m := mappings[f.Object]
		if m == nil {
			m = &profile.Mapping{ID: uint64(len(mappings) + 1), File: f.Object}
			mappings[f.Object] = m
			p.Mapping = append(p.Mapping, m)
		}
		fn := funcs[f.Name]
		if fn == nil {
			fn = &profile.Function{ID: uint64(len(funcs) + 1), Name: f.Name, SystemName: f.Name}
			funcs[f.Name] = fn
			p.Function = append(p.Function, fn)
		}
		l := &profile.Location{ID: uint64(len(locs) + 1), Mapping: m, Line: []profile.Line{{Function: fn}}}
		locs[f] = l
		p.Location = append(p.Location, l)
		return l
	}
	for _, d := range dumps {
		labels := map[string][]string{"backend_type": {kinds[d.PID]}, "step": {step}}
		for _, sc := range d.stacks(exclude) {
			if sc.v <= 0 {
				continue
			}
			s := &profile.Sample{Value: []int64{sc.v}, Label: labels, NumLabel: map[string][]int64{"pid": {int64(d.PID)}}}
			for i := len(sc.path) - 1; i >= 0; i-- { // leaf first
				s.Location = append(s.Location, location(sc.path[i]))
			}
			p.Sample = append(p.Sample, s)
		}
	}
	return p, p.CheckValid()
}

// stackCost is one rebuilt call stack, root first, and its own
// instructions.
type stackCost struct {
	path []CallgrindFunc
	v    int64
}

// stacks rebuilds the dump's call stacks (CallgrindProfile), without the
// functions named in exclude and their callees. The stacks' instructions
// add up to the dump's own less those excluded: where recursion makes the
// call graph's inclusive costs overlap, they are scaled to that sum.
func (d *CallgrindDump) stacks(exclude []string) []stackCost {
	skip := map[string]bool{}
	for _, n := range exclude {
		skip[n] = true
	}
	incl := d.Inclusive()
	callees := map[CallgrindFunc][]CallgrindFunc{}
	into := map[CallgrindFunc]uint64{}
	for k, v := range d.Calls {
		if k[0] == k[1] || v.Ir == 0 {
			continue
		}
		callees[k[0]] = append(callees[k[0]], k[1])
		into[k[1]] += v.Ir
	}
	for _, cs := range callees {
		sortFuncs(cs)
	}
	total := d.Total().Ir
	for _, n := range exclude {
		total -= d.Inside(n).Ir
	}
	floor := float64(total) * minStackShare
	var out []stackCost
	var raw []float64
	var path []CallgrindFunc
	onPath := map[CallgrindFunc]bool{}
	var walk func(f CallgrindFunc, w float64)
	walk = func(f CallgrindFunc, w float64) {
		path = append(path, f)
		onPath[f] = true
		scale := w / float64(max(incl[f].Ir, 1))
		kept := float64(d.Self[f].Ir) * scale
		for _, g := range callees[f] {
			e := float64(d.Calls[[2]CallgrindFunc{f, g}].Ir) * scale
			if skip[g.Name] {
				continue
			}
			if onPath[g] || e < floor {
				kept += e // recursion, or too small to follow: stays here
				continue
			}
			walk(g, e)
		}
		if kept > 0 {
			out = append(out, stackCost{path: append([]CallgrindFunc(nil), path...)})
			raw = append(raw, kept)
		}
		onPath[f] = false
		path = path[:len(path)-1]
	}
	// Roots: what no caller explains (the functions running when counting
	// began, and the program's entry).
	var roots []CallgrindFunc
	for f := range incl {
		if incl[f].Ir > into[f] && !skip[f.Name] {
			roots = append(roots, f)
		}
	}
	sortFuncs(roots)
	for _, f := range roots {
		walk(f, float64(incl[f].Ir-into[f]))
	}
	var sum float64
	for _, v := range raw {
		sum += v
	}
	for i := range out {
		out[i].v = int64(raw[i]*float64(total)/max(sum, 1) + 0.5)
	}
	return out
}

func sortFuncs(fs []CallgrindFunc) {
	sort.Slice(fs, func(i, j int) bool {
		return fs[i].Name < fs[j].Name || fs[i].Name == fs[j].Name && fs[i].Object < fs[j].Object
	})
}
