package suite

import (
	"fmt"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/target"
)

// OwnTargets is an entry of a suite file's cells: the cells that Where
// keeps (written as --only writes it) run on Targets in place of the
// suite's targets of the same names; the suite's other targets stay. A
// suite closes the targets in use and opens a cell's own between cells
// (schedule/cells), so one cell may run through a pooler that balances
// reads over a replica while another sends every statement to the
// primary, each compared under the same target names.
//
// An entry may also give those cells settings of their own, in place of
// the suite's: what to count under Valgrind (Count; none for a cell
// measured natively), the client counts, the step's length in time or
// transactions, the warm-up, the rounds and the data's scale — so that one suite decides on
// counted cells and reports native ones beside them (the pooler-ci
// preset). A cell that counts and one that does not run on targets
// opened apart.
type OwnTargets struct {
	Where   string
	Targets []target.Given
	// The cells' own settings, nil (or empty) where the suite's stay.
	Count        *probeopt.Count
	Clients      []int
	Duration     *time.Duration
	Transactions *int
	Warmup       *time.Duration
	Rounds       *compare.Rounds
	Scale        *int
	where        []Filter
	line         int
	keys         []string // the settings given, as written
}

// ownSpec is an entry of cells: as written.
type ownSpec struct {
	Where        string       `yaml:"where"`
	Targets      []targetSpec `yaml:"targets"`
	Count        *string      `yaml:"count"`
	Clients      []int        `yaml:"clients"`
	Duration     *string      `yaml:"duration"`
	Transactions *int         `yaml:"transactions"`
	Warmup       *string      `yaml:"warmup"`
	Rounds       any          `yaml:"rounds"`
	Scale        *int         `yaml:"scale"`
}

// settings reads an entry's settings of its own into o, each checked at
// its place.
func (p *parsed) settings(o *OwnTargets, c ownSpec, path string) error {
	if c.Count != nil {
		v := strings.TrimSpace(*c.Count)
		var n probeopt.Count
		if v != "none" {
			var err error
			if n, err = probeopt.ParseCount(v); err != nil {
				return p.errAt(path+".count", "count: %q: %v (or none, for cells measured natively)", v, err)
			}
		}
		o.Count, o.keys = &n, append(o.keys, "count")
	}
	if c.Clients != nil {
		if len(c.Clients) == 0 {
			return p.errAt(path+".clients", "give at least one client count")
		}
		for _, n := range c.Clients {
			if n < 1 {
				return p.errAt(path+".clients", "client counts must be positive, got %d", n)
			}
		}
		o.Clients, o.keys = c.Clients, append(o.keys, "clients")
	}
	if c.Duration != nil && c.Transactions != nil {
		return p.errAt(path+".transactions", "duration and transactions are exclusive")
	}
	if c.Duration != nil {
		d, err := duration(*c.Duration)
		if err != nil || d <= 0 {
			return p.errAt(path+".duration", "duration: want a positive duration (10s, 1m), got %q", *c.Duration)
		}
		o.Duration, o.keys = &d, append(o.keys, "duration")
	}
	if c.Transactions != nil {
		if *c.Transactions < 1 {
			return p.errAt(path+".transactions", "transactions must be at least 1")
		}
		o.Transactions, o.keys = c.Transactions, append(o.keys, "transactions")
	}
	if c.Warmup != nil {
		d, err := duration(*c.Warmup)
		if err != nil {
			return p.errAt(path+".warmup", "%v", err)
		}
		o.Warmup, o.keys = &d, append(o.keys, "warmup")
	}
	if c.Rounds != nil {
		r, err := compare.ParseRounds(fmt.Sprint(c.Rounds))
		if err != nil {
			return p.errAt(path+".rounds", "%v", err)
		}
		if !r.Auto && r.N < 2 {
			return p.errAt(path+".rounds", "rounds must be at least 2 for a paired comparison")
		}
		o.Rounds, o.keys = &r, append(o.keys, "rounds")
	}
	if c.Scale != nil {
		if *c.Scale < 1 {
			return p.errAt(path+".scale", "scale must be at least 1, got %d", *c.Scale)
		}
		o.Scale, o.keys = c.Scale, append(o.keys, "scale")
	}
	return nil
}

// CellLoad is how one cell runs: the suite's count, client counts, step
// length, warm-up and rounds, or those a cells: entry gives it; Own says
// some of it is the cell's own.
type CellLoad struct {
	Count        probeopt.Count
	Clients      []int
	Duration     time.Duration
	Transactions int
	Warmup       time.Duration
	Rounds       compare.Rounds
	// Scale is the data's scale factor (a cell's matrix parameter scale
	// still overrides it).
	Scale int
	Own   bool
}

// CellLoad is how cell c runs (CellLoad).
func (s *Suite) CellLoad(c Cell) CellLoad {
	l := CellLoad{Count: s.Count, Clients: s.Clients, Duration: s.Duration, Transactions: s.Transactions, Warmup: s.Warmup, Rounds: s.RoundsSpec(), Scale: s.Scale}
	for _, o := range s.Own {
		if !c.keeps(o.where) {
			continue
		}
		l.Own = l.Own || len(o.keys) > 0
		if o.Count != nil {
			l.Count = *o.Count
		}
		if o.Clients != nil {
			l.Clients = o.Clients
		}
		if o.Duration != nil {
			l.Duration, l.Transactions = *o.Duration, 0
		}
		if o.Transactions != nil {
			l.Transactions, l.Duration = *o.Transactions, 0
		}
		if o.Warmup != nil {
			l.Warmup = *o.Warmup
		}
		if o.Rounds != nil {
			l.Rounds = *o.Rounds
		}
		if o.Scale != nil {
			l.Scale = *o.Scale
		}
	}
	return l
}

// fillOwn reads cells: and given_together:, each with its place.
func (p *parsed) fillOwn(s *Suite, cells []ownSpec, together [][]string) error {
	for i, c := range cells {
		path := fmt.Sprintf("$.cells[%d]", i)
		if strings.TrimSpace(c.Where) == "" {
			return p.errAt(path, "cells: give where: (the cells these targets are for, as --only writes them: workload=select-only)")
		}
		where, err := ParseOnly(c.Where)
		if err != nil {
			return p.errAt(path+".where", "where: %v", err)
		}
		o := OwnTargets{Where: c.Where, where: where}
		o.line, _ = p.line(path)
		if err := p.settings(&o, c, path); err != nil {
			return err
		}
		if len(c.Targets) == 0 && len(o.keys) == 0 {
			return p.errAt(path, "cells: give targets: (the suite's targets these cells run on instead, by the same names), or settings of their own (count:, clients:, duration:, transactions:, warmup:, rounds:)")
		}
		for j, t := range c.Targets {
			g, err := t.spec(s.Dir)
			if err != nil {
				return p.errAt(fmt.Sprintf("%s.targets[%d]", path, j), "%v", err)
			}
			o.Targets = append(o.Targets, g)
		}
		s.Own = append(s.Own, o)
	}
	params := map[string]bool{}
	for _, pr := range s.Params {
		params[pr.Name] = true
	}
	for i, g := range together {
		path := fmt.Sprintf("$.given_together[%d]", i)
		if len(g) < 2 {
			return p.errAt(path, "given_together: a group names two parameters or more ([base, base_balanced])")
		}
		for _, name := range g {
			if !params[name] {
				return p.errAt(path, "given_together: %s is no parameter of the suite (have %s)", name, strings.Join(sortedKeys(params), ", "))
			}
		}
		s.Together = append(s.Together, g)
	}
	return nil
}

// checkOwn checks cells: against the suite: every where names axes and
// their values, every target is the suite's (by name) and parses in its
// cells' lists, and no cell gets a target from two entries.
func (p *parsed) checkOwn(s *Suite) error {
	if len(s.Own) == 0 {
		return nil
	}
	for i, o := range s.Own {
		if len(o.Targets) > 0 && len(s.Targets) == 0 {
			return p.errAt(fmt.Sprintf("$.cells[%d]", i), "cells: a cell's targets replace the suite's of the same names: give the suite's targets: too")
		}
	}
	suiteNames := map[string]bool{}
	var names []string
	for _, g := range s.Targets {
		suiteNames[givenName(g)] = true
		names = append(names, givenName(g))
	}
	for i, o := range s.Own {
		path := fmt.Sprintf("$.cells[%d]", i)
		for _, f := range o.where {
			ax := s.axis(f.Name)
			if ax == nil {
				return p.errAt(path+".where", "where: %s names no axis of %s (axes: %s)", f.Name, s.Name, strings.Join(s.axisNames(), ", "))
			}
			for _, v := range f.Values {
				if !contains(ax.Values, v) {
					return p.errAt(path+".where", "where: %s=%s is not a value of the axis (%s)", f.Name, v, strings.Join(ax.Values, ", "))
				}
			}
		}
		seen := map[string]bool{}
		for j, g := range o.Targets {
			name := givenName(g)
			switch {
			case name == "":
				return p.errAt(fmt.Sprintf("%s.targets[%d]", path, j), "a cell's target is named as the suite's it replaces: NAME=SPEC")
			case !suiteNames[name]:
				return p.errAt(fmt.Sprintf("%s.targets[%d]", path, j), "target %s is none of the suite's targets (%s): a cell's targets replace the suite's of the same names",
					name, strings.Join(names, ", "))
			case seen[name]:
				return p.errAt(fmt.Sprintf("%s.targets[%d]", path, j), "target %s is given twice", name)
			}
			seen[name] = true
		}
	}
	for _, c := range s.Cells() {
		from := map[string]int{}
		set := map[string]int{}
		for i, o := range s.Own {
			if !c.keeps(o.where) {
				continue
			}
			for _, k := range o.keys {
				if j, ok := set[k]; ok {
					return p.errAt(fmt.Sprintf("$.cells[%d]", i), "cell %s gets %s: from cells[%d] too: give each cell's settings once", c.Key(), k, j)
				}
				set[k] = i
			}
			for _, g := range o.Targets {
				if k, ok := from[givenName(g)]; ok {
					return p.errAt(fmt.Sprintf("$.cells[%d]", i), "cell %s gets target %s from cells[%d] too: give each cell's target once", c.Key(), givenName(g), k)
				}
				from[givenName(g)] = i
			}
		}
		if len(from) == 0 {
			continue
		}
		gs, _ := s.CellTargets(c)
		if _, err := parseTargets(gs, s.Baseline, false); err != nil {
			return p.errAt(fmt.Sprintf("$.cells[%d]", minOf(from)), "cell %s: %v", c.Key(), err)
		}
	}
	return nil
}

// minOf is the smallest of m's values.
func minOf(m map[string]int) int {
	first := true
	n := 0
	for _, v := range m {
		if first || v < n {
			n, first = v, false
		}
	}
	return n
}

// givenName is the name a given target has: its map's name, or the NAME
// of NAME=SPEC ("" without one).
func givenName(g target.Given) string {
	if g.Def != nil {
		return g.Name
	}
	name, _, ok := strings.Cut(g.Spec, "=")
	if !ok || strings.Contains(name, ":") {
		return ""
	}
	return strings.TrimSpace(name)
}

// CellTargets returns the targets cell c runs on, the parameters' values
// in their templates: the suite's, with those an entry of cells: gives
// for c in place of the suite's of the same names; own says whether any
// was replaced.
func (s *Suite) CellTargets(c Cell) (gs []target.Given, own bool) {
	gs = s.TargetSpecs()
	for _, o := range s.Own {
		if !c.keeps(o.where) {
			continue
		}
		for _, g := range o.Targets {
			for i := range gs {
				if givenName(gs[i]) == givenName(g) {
					gs[i], own = s.expandParams(g), true
				}
			}
		}
	}
	return gs, own
}

// OwnKeys are the keys of the cells that run on targets of their own.
func (s *Suite) OwnKeys() []string {
	var out []string
	for _, c := range s.Cells() {
		if _, own := s.CellTargets(c); own {
			out = append(out, c.Key())
		}
	}
	return out
}

// Apart says, for the parameters given on the command line (--param), each
// one given without another that a given_together: group takes with it,
// and what runs on the one left at its default: "--param base is given
// without base_balanced, which pooler-ci takes with it: ...". A note, not
// a refusal: the run may mean it (an A/A of the default on one side).
func (s *Suite) Apart(given []string) []string {
	isGiven := map[string]bool{}
	for _, g := range given {
		isGiven[g] = true
	}
	var out []string
	for _, group := range s.Together {
		var missing []string
		for _, name := range group {
			// One left to derive its target from a given one follows it.
			if p := s.param(name); !isGiven[name] && !(p != nil && p.Balancing != "" && isGiven[p.Balancing]) {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 || len(missing) == len(group) {
			continue
		}
		var uses []string
		for _, m := range missing {
			uses = append(uses, s.usesOf(m)...)
		}
		why := ""
		if len(uses) > 0 {
			why = ": " + strings.Join(uses, "; ")
		}
		for _, name := range group {
			if isGiven[name] {
				out = append(out, fmt.Sprintf("--param %s is given without %s, which %s takes with it%s: give --param %s too",
					name, strings.Join(missing, " and "), s.Name, why, strings.Join(missing, "=... --param ")+"=..."))
			}
		}
	}
	return out
}

// usesOf says where parameter name stands in a target, with its value:
// "in the cells workload=select-only, base is base_balanced, left at its
// default (proxy:...)".
func (s *Suite) usesOf(name string) []string {
	value := ""
	if p := s.param(name); p != nil {
		value = p.Shown()
	}
	names := func(gs []target.Given) []string {
		var out []string
		for _, g := range gs {
			for _, n := range templateNames(g.Templates()) {
				if n == name {
					out = append(out, givenName(g))
				}
			}
		}
		return out
	}
	var out []string
	if ts := names(s.Targets); len(ts) > 0 {
		out = append(out, fmt.Sprintf("%s's %s is %s, left at its default (%s)", s.Name, strings.Join(ts, ", "), name, value))
	}
	for _, o := range s.Own {
		if ts := names(o.Targets); len(ts) > 0 {
			out = append(out, fmt.Sprintf("in the cells %s, %s is %s, left at its default (%s)", o.Where, strings.Join(ts, ", "), name, value))
		}
	}
	return out
}

// ownTemplates is every target a cells: entry gives, for the templates
// it names.
func (s *Suite) ownTemplates() []target.Given {
	var out []target.Given
	for _, o := range s.Own {
		out = append(out, o.Targets...)
	}
	return out
}

// axis is the axis called name, nil if none.
func (s *Suite) axis(name string) *Axis {
	for i := range s.Axes {
		if s.Axes[i].Name == name {
			return &s.Axes[i]
		}
	}
	return nil
}

// axisNames lists the axes' names ("none" without axes).
func (s *Suite) axisNames() []string {
	var out []string
	for _, a := range s.Axes {
		out = append(out, a.Name)
	}
	if len(out) == 0 {
		out = []string{"none"}
	}
	return out
}
