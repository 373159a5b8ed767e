package suite

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/target"
)

// OwnTargets is an entry of a suite file's cells: the cells that Where
// keeps (written as --only writes it) run on Targets in place of the
// suite's targets of the same names; the suite's other targets stay. A
// suite closes the targets in use and opens a cell's own between cells
// (plan.RunSuite), so one cell may run through a pooler that balances
// reads over a replica while another sends every statement to the
// primary, each compared under the same target names.
type OwnTargets struct {
	Where   string
	Targets []target.Given
	where   []Filter
	line    int
}

// ownSpec is an entry of cells: as written.
type ownSpec struct {
	Where   string       `yaml:"where"`
	Targets []targetSpec `yaml:"targets"`
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
		if len(c.Targets) == 0 {
			return p.errAt(path, "cells: give targets: (the suite's targets these cells run on instead, by the same names)")
		}
		o := OwnTargets{Where: c.Where, where: where}
		o.line, _ = p.line(path)
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
	if len(s.Targets) == 0 {
		return p.errAt("$.cells", "cells: a cell's targets replace the suite's of the same names: give the suite's targets: too")
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
		for i, o := range s.Own {
			if !c.keeps(o.where) {
				continue
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
		if _, err := target.ParseGiven(gs, s.Baseline, 1); err != nil {
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
