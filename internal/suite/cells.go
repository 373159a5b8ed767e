package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// Cell is one cell of the matrix: a value for every axis.
type Cell struct {
	Index  int     // 0-based, in matrix order (the last axis varies fastest)
	Params []Param // one per axis, in axis order
}

// Key names the cell as --only and bounds write it: "partitions=32,rows=100";
// "all" for a suite without axes.
func (c Cell) Key() string {
	if len(c.Params) == 0 {
		return "all"
	}
	parts := make([]string, len(c.Params))
	for i, p := range c.Params {
		parts[i] = p.Name + "=" + p.Value
	}
	return strings.Join(parts, ",")
}

// Dir is the cell's directory name in a bundle: "003-partitions-32-rows-100".
func (c Cell) Dir() string {
	key := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_':
			return r
		}
		return '-'
	}, c.Key())
	if len(key) > 80 {
		key = key[:80]
	}
	return fmt.Sprintf("%03d-%s", c.Index+1, key)
}

// Value is the cell's value of the parameter called name.
func (c Cell) Value(name string) (string, bool) {
	for _, p := range c.Params {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// Matches reports whether the cell has every value in where.
func (c Cell) Matches(where []Param) bool {
	for _, w := range where {
		if v, ok := c.Value(w.Name); !ok || v != w.Value {
			return false
		}
	}
	return true
}

// Cells expands the matrix: every combination of the axes' values, the
// last axis varying fastest; one cell for a suite without axes.
func (s *Suite) Cells() []Cell {
	cells := []Cell{{}}
	for _, ax := range s.Axes {
		var next []Cell
		for _, c := range cells {
			for _, v := range ax.Values {
				ps := append(append([]Param(nil), c.Params...), Param{Name: ax.Name, Value: v})
				next = append(next, Cell{Params: ps})
			}
		}
		cells = next
	}
	for i := range cells {
		cells[i].Index = i
	}
	return cells
}

// Filter is one condition of --only: the parameter has one of the values.
type Filter struct {
	Name   string
	Values []string
}

// ParseOnly reads --only's "partitions=32,rows=100|10000": every condition
// must hold; a condition's values are separated by |.
func ParseOnly(s string) ([]Filter, error) {
	var out []Filter
	for _, part := range strings.Split(s, ",") {
		name, vals, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || name == "" || vals == "" {
			return nil, fmt.Errorf("%q is not NAME=VALUE[|VALUE...]", part)
		}
		out = append(out, Filter{Name: strings.TrimSpace(name), Values: strings.Split(vals, "|")})
	}
	return out, nil
}

// Only returns the cells that every filter keeps; a filter naming no axis,
// or a value the axis does not have, is a usage error.
func (s *Suite) Only(cells []Cell, filters []Filter) ([]Cell, error) {
	for _, f := range filters {
		ax := s.axis(f.Name)
		if ax == nil {
			return nil, usage.Errorf("--only: %s names no axis of %s", f.Name, s.Name)
		}
		for _, v := range f.Values {
			if !contains(ax.Values, v) {
				return nil, usage.Errorf("--only: %s=%s is not a value of the axis (%s)", f.Name, v, strings.Join(ax.Values, ", "))
			}
		}
	}
	var out []Cell
	for _, c := range cells {
		if c.keeps(filters) {
			out = append(out, c)
		}
	}
	return out, nil
}

// keeps reports whether every filter keeps the cell: its value of each
// filter's parameter is one of the filter's values.
func (c Cell) keeps(filters []Filter) bool {
	for _, f := range filters {
		if v, _ := c.Value(f.Name); !contains(f.Values, v) {
			return false
		}
	}
	return true
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// template is a parameter reference: {{name}}.
var template = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// templateNames lists the parameters text refers to.
func templateNames(text string) []string {
	var out []string
	for _, m := range template.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// Expand replaces every {{name}} in text with the cell's value of name, or
// a parameter's (the cell's axes first); a parameter's value may hold
// templates in turn (a few levels deep).
func (s *Suite) Expand(text string, c Cell) string {
	for i := 0; i < 4 && template.MatchString(text); i++ {
		text = s.expandOnce(text, c)
	}
	return text
}

func (s *Suite) expandOnce(text string, c Cell) string {
	return template.ReplaceAllStringFunc(text, func(m string) string {
		name := template.FindStringSubmatch(m)[1]
		if v, ok := c.Value(name); ok {
			return v
		}
		if p := s.param(name); p != nil {
			return s.valueOf(*p)
		}
		return m
	})
}

// param is the suite's parameter called name, nil if none.
func (s *Suite) param(name string) *Param {
	for i := range s.Params {
		if s.Params[i].Name == name {
			return &s.Params[i]
		}
	}
	return nil
}

// valueOf is a parameter's value as text: a derived one's is that of the
// parameter it derives from (its target; the derivation is the target's,
// expandParams).
func (s *Suite) valueOf(p Param) string {
	if p.Balancing != "" {
		if from := s.param(p.Balancing); from != nil {
			return from.Value
		}
	}
	return p.Value
}

// TargetSpecs returns the suite's targets with the parameters' values in
// their {{name}} templates (a target's spec may name a build or a proxy's
// definition given with --param). Other {{...}} (a proxy's own
// templates) are left as they are.
func (s *Suite) TargetSpecs() []target.Given {
	out := make([]target.Given, len(s.Targets))
	for i, t := range s.Targets {
		out[i] = s.expandParams(t)
	}
	return out
}

// expandParams is g with the parameters' values in its {{name}}
// templates; other {{...}} (a proxy's own templates) are left as they are.
//
// A parameter that derives its target from another's (Param.Balancing)
// stands for that one's value, and makes g its balancing variant
// (target.Given.Balanced), with the fix to say where pgscale cannot derive
// one.
func (s *Suite) expandParams(g target.Given) target.Given {
	for _, n := range templateNames(g.Templates()) {
		if p := s.param(n); p != nil && p.Balancing != "" {
			g.Balanced = true
			g.Fix = fmt.Sprintf("give --param %s=proxy:FILE.yaml, a definition that balances reads over the replicas (as examples/proxy/pgbouncer-balanced.yaml, with %s's build:)", p.Name, p.Balancing)
		}
	}
	return g.Expand(func(text string) string {
		return template.ReplaceAllStringFunc(text, func(m string) string {
			if p := s.param(template.FindStringSubmatch(m)[1]); p != nil {
				return s.valueOf(*p)
			}
			return m
		})
	})
}

// SetParam sets a parameter's value (--param NAME=VALUE); a name that is
// neither a parameter nor an axis is a usage error.
func (s *Suite) SetParam(name, value string) error {
	if p := s.param(name); p != nil {
		p.Value, p.Balancing = value, ""
		return nil
	}
	var have []string
	for _, p := range s.Params {
		have = append(have, p.Name)
	}
	if len(have) == 0 {
		have = []string{"none"}
	}
	return usage.Errorf("--param %s: %s has no such parameter (parameters: %s)", name, s.Name, strings.Join(have, ", "))
}

// SetAxis replaces the values of an axis of the matrix (--matrix
// NAME=V1,V2): a study's preset run at other points. A name that is no
// axis, or no value, is a usage error.
func (s *Suite) SetAxis(name string, values []string) error {
	var have []string
	for i := range s.Axes {
		if s.Axes[i].Name != name {
			have = append(have, s.Axes[i].Name)
			continue
		}
		if len(values) == 0 {
			return usage.Errorf("--matrix %s: no value", name)
		}
		for j, v := range values {
			if v == "" || contains(values[:j], v) {
				return usage.Errorf("--matrix %s: empty or repeated value %q", name, v)
			}
		}
		s.Axes[i].Values = values
		return nil
	}
	if len(have) == 0 {
		have = []string{"none"}
	}
	return usage.Errorf("--matrix %s: %s has no such axis (axes: %s)", name, s.Name, strings.Join(have, ", "))
}

// Unmatched says, once --matrix has replaced axes' values (SetAxis; the
// flags' values as given in matrix), each part of the suite limited to
// cells of which none is left: an entry of cells: whose where: keeps no
// cell, whose targets are then not used, and a bound whose cells: names
// none, which then bounds nothing. Notes, not refusals: --matrix runs a
// study at other points, where such a part has nothing to do, as --only
// leaves cells out (pooler-ci's --matrix workload=tpcb-like); the note
// shows the case where a value was mistyped and a cell runs on the
// suite's targets instead of its own.
func (s *Suite) Unmatched(matrix []string) []string {
	if len(matrix) == 0 {
		return nil
	}
	cells := s.Cells()
	after := "--matrix " + strings.Join(matrix, " --matrix ")
	var out []string
	for i, o := range s.Own {
		if !slices.ContainsFunc(cells, func(c Cell) bool { return c.keeps(o.where) }) {
			out = append(out, fmt.Sprintf("%s: cells[%d] (where: %s) is for no cell after %s: its targets are not used", s.Name, i, o.Where, after))
		}
	}
	for _, b := range s.Bounds {
		if len(b.Where) > 0 && !slices.ContainsFunc(cells, func(c Cell) bool { return c.Matches(b.Where) }) {
			var where []string
			for _, w := range b.Where {
				where = append(where, w.Name+"="+w.Value)
			}
			out = append(out, fmt.Sprintf("%s: the bound %s (cells: %s) is for no cell after %s: it bounds nothing", s.Name, b.Spec, strings.Join(where, ","), after))
		}
	}
	return out
}

// BoundsFor is the bounds that apply to cell c: every entry of bounds:
// whose cells: it matches; a key two of them bound in c is refused at the
// second's line.
func (s *Suite) BoundsFor(c Cell) (stats.Bounds, error) {
	var out stats.Bounds
	for _, b := range s.Bounds {
		if !c.Matches(b.Where) {
			continue
		}
		all, err := out.Add(b.Bounds...)
		if err != nil {
			return nil, usageAt(s, b.line, "cell %s: %v", c.Key(), err)
		}
		out = all
	}
	return out, nil
}

// ScriptSource is a script's text for a cell, templated.
func (s *Suite) ScriptSource(sc Script, c Cell) (string, error) {
	src := sc.SQL
	if sc.File != "" {
		var err error
		if src, err = readScript(s.Dir, sc.File); err != nil {
			return "", usageAt(s, sc.line, "script %v", err)
		}
	}
	return s.Expand(src, c), nil
}

// readScript reads a script file relative to the suite's directory.
func readScript(dir, file string) (string, error) {
	path := file
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, file)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %v", file, err)
	}
	return string(b), nil
}
