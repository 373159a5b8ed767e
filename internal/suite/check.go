package suite

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// optionAxes are axes that set a run option instead of a template: a
// matrix of protocols or scales needs no {{...}}.
var optionAxes = map[string]bool{"protocol": true, "scale": true}

var namePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// fill turns the file's fields into the suite, checking each with its place.
func (p *parsed) fill(s *Suite, fs *fileSpec) error {
	if fs.Name != nil {
		s.Name = *fs.Name
	}
	if fs.Description != nil {
		s.Description = *fs.Description
	}
	if len(fs.Targets) > 0 {
		s.Targets = nil
		for i, t := range fs.Targets {
			spec, err := t.spec(s.Dir)
			if err != nil {
				return p.errAt(fmt.Sprintf("$.targets[%d]", i), "%v", err)
			}
			s.Targets = append(s.Targets, spec)
		}
	}
	if fs.Baseline != nil {
		s.Baseline = *fs.Baseline
	}
	for _, g := range []struct {
		key   string
		given bool
	}{{"baseline", fs.Baseline != nil}, {"rounds", fs.Rounds != nil}, {"slice", fs.Slice != nil}, {"bounds", len(fs.Bounds) > 0}} {
		if g.given {
			l, _ := p.line("$." + g.key)
			s.comparing = append(s.comparing, givenPart{g.key, l})
		}
	}
	seen := map[string]bool{}
	for _, item := range fs.Matrix {
		name, _ := item.Key.(string)
		path := "$.matrix." + name
		if !namePattern.MatchString(name) {
			return p.errAt("$.matrix", "axis %v: a name is letters, digits and _, starting with a letter", item.Key)
		}
		if seen[name] {
			return p.errAt(path, "axis %s is given twice", name)
		}
		seen[name] = true
		list, ok := item.Value.([]any)
		if !ok || len(list) == 0 {
			return p.errAt(path, "axis %s: give its values as a list, e.g. %s: [0, 16, 32]", name, name)
		}
		ax := Axis{Name: name}
		ax.line, _ = p.line(path)
		for j, v := range list {
			text, err := value(v)
			if err != nil {
				return p.errAt(fmt.Sprintf("%s[%d]", path, j), "axis %s: %v", name, err)
			}
			ax.Values = append(ax.Values, text)
		}
		s.Axes = append(s.Axes, ax)
	}
	for _, item := range fs.Params {
		name, _ := item.Key.(string)
		if !namePattern.MatchString(name) || seen[name] {
			return p.errAt("$.params", "parameter %v: a name of its own, letters, digits and _", item.Key)
		}
		seen[name] = true
		if from, ok, err := balancing(item.Value); ok || err != nil {
			if err != nil {
				return p.errAt("$.params."+name, "parameter %s: %v", name, err)
			}
			s.Params = append(s.Params, Param{Name: name, Balancing: from})
			continue
		}
		text, err := value(item.Value)
		if err != nil {
			return p.errAt("$.params."+name, "parameter %s: %v", name, err)
		}
		s.Params = append(s.Params, Param{Name: name, Value: text})
	}
	for _, pr := range s.Params {
		if pr.Balancing == "" {
			continue
		}
		from := s.param(pr.Balancing)
		switch {
		case from == nil:
			return p.errAt("$.params."+pr.Name, "parameter %s: balancing: %s is no parameter of the suite", pr.Name, pr.Balancing)
		case from.Balancing != "" || from.Name == pr.Name:
			return p.errAt("$.params."+pr.Name, "parameter %s: balancing: %s is derived itself: name a parameter with a value", pr.Name, pr.Balancing)
		}
	}
	if fs.Setup != nil {
		s.Setup = fs.Setup.SQL
		if fs.Setup.File != "" {
			text, err := readScript(s.Dir, fs.Setup.File)
			if err != nil {
				return p.errAt("$.setup", "setup: %v", err)
			}
			s.Setup = text
		}
	}
	builtin := false
	for i, sc := range fs.Scripts {
		path := fmt.Sprintf("$.scripts[%d]", i)
		n := 0
		for _, x := range []string{sc.Builtin, sc.File, sc.SQL} {
			if x != "" {
				n++
			}
		}
		if n != 1 {
			return p.errAt(path, "a script is one of builtin: NAME, file: PATH or sql: TEXT")
		}
		w := 1
		if sc.Weight != nil {
			if *sc.Weight < 0 {
				return p.errAt(path, "weight must not be negative")
			}
			w = *sc.Weight
		}
		out := Script{Builtin: sc.Builtin, File: sc.File, Name: sc.Name, SQL: sc.SQL, Weight: w}
		out.line, _ = p.line(path)
		if out.Name == "" {
			switch {
			case sc.Builtin != "":
				out.Name = sc.Builtin
			case sc.File != "":
				out.Name = strings.TrimSuffix(sc.File, ".sql")
			default:
				out.Name = fmt.Sprintf("script%d", i+1)
			}
		}
		builtin = builtin || sc.Builtin != ""
		s.Scripts = append(s.Scripts, out)
	}
	if len(fs.Scripts) == 1 && fs.Scripts[0].Weight != nil {
		return p.errAt("$.scripts[0]", "weight: with one script there is nothing to weigh it against; drop it")
	}
	if len(s.Scripts) == 0 {
		s.Scripts = []Script{{Builtin: "select-only", Name: "select-only", Weight: 1}}
		builtin = true
	}
	s.WorkloadInit = builtin
	if fs.Init != nil {
		s.WorkloadInit = *fs.Init
	}
	if fs.Clients != nil {
		if len(fs.Clients) == 0 {
			return p.errAt("$.clients", "give at least one client count")
		}
		for _, c := range fs.Clients {
			if c < 1 {
				return p.errAt("$.clients", "client counts must be positive, got %d", c)
			}
		}
		s.Clients = fs.Clients
	}
	if fs.Duration != nil && fs.Transactions != nil {
		return p.errAt("$.transactions", "duration and transactions are exclusive")
	}
	if fs.Duration != nil {
		d, err := duration(*fs.Duration)
		if err != nil || d <= 0 {
			return p.errAt("$.duration", "duration: want a positive duration (10s, 1m), got %q", *fs.Duration)
		}
		s.Duration = d
	}
	if fs.Transactions != nil {
		if *fs.Transactions < 1 {
			return p.errAt("$.transactions", "transactions must be at least 1")
		}
		s.Transactions, s.Duration = *fs.Transactions, 0
	}
	if fs.Warmup != nil {
		d, err := duration(*fs.Warmup)
		if err != nil {
			return p.errAt("$.warmup", "%v", err)
		}
		s.Warmup = d
	}
	if fs.Slice != nil {
		d, err := duration(*fs.Slice)
		if err != nil {
			return p.errAt("$.slice", "%v", err)
		}
		s.Slice = d
	}
	s.SliceGiven = fs.Slice != nil
	if fs.Rounds != nil {
		r, err := compare.ParseRounds(fmt.Sprint(fs.Rounds))
		if err != nil {
			return p.errAt("$.rounds", "%v", err)
		}
		s.SetRounds(r)
	}
	if fs.Protocol != nil {
		s.Protocol = *fs.Protocol
	}
	if fs.Scale != nil {
		if *fs.Scale < 1 {
			return p.errAt("$.scale", "scale must be at least 1")
		}
		s.Scale = *fs.Scale
	}
	if fs.Probes != nil {
		s.Probes = *fs.Probes
	}
	if fs.Count != nil {
		c, err := probeopt.ParseCount(*fs.Count)
		if err != nil {
			return p.errAt("$.count", "count: %q: %v (or nothing)", *fs.Count, err)
		}
		s.Count = c
	}
	if fs.Profile != nil {
		s.Profile = *fs.Profile
	}
	if err := s.profileTurns(); err != nil {
		return err
	}
	s.Disturb = fs.Disturb
	if len(fs.Defines) > 0 {
		s.Defines = map[string]string{}
		for k, v := range fs.Defines {
			text, err := value(v)
			if err != nil {
				return p.errAt("$.defines."+k, "define %s: %v", k, err)
			}
			s.Defines[k] = text
		}
	}
	if r := fs.Rule; r != nil {
		if r.Clients < 1 || r.Against < 1 || r.Below <= 0 || r.Measure == "" {
			return p.errAt("$.rule", "rule: give measure, clients, against (client counts) and below (a percentage)")
		}
		e, err := compare.ParseExpectation(fmt.Sprintf("%s@c=%d<c=%d+%g%%", r.Measure, r.Clients, r.Against, r.Below))
		if err != nil {
			return p.errAt("$.rule", "rule: %v", err)
		}
		e.Decision = r.Decision
		if e.Decision == "" {
			e.Decision = "no optimisation needed"
		}
		s.Expect = append(s.Expect, e)
	}
	for i, spec := range fs.Expect {
		e, err := compare.ParseExpectation(spec)
		if err != nil {
			return p.errAt(fmt.Sprintf("$.expect[%d]", i), "%v", err)
		}
		s.Expect = append(s.Expect, e)
	}
	if fs.Confidence != nil {
		if !(*fs.Confidence > 0 && *fs.Confidence < 1) {
			return p.errAt("$.confidence", "confidence must be between 0 and 1, e.g. 0.95")
		}
		s.Confidence = *fs.Confidence
	}
	for i, b := range fs.Bounds {
		path := fmt.Sprintf("$.bounds[%d]", i)
		l, _ := p.line(path)
		bs, err := stats.ParseBounds([]string{b.Bound})
		if err != nil {
			return p.errAt(path, "%v", err)
		}
		out := Bound{Spec: strings.TrimSpace(b.Bound), Bounds: bs, line: l}
		if b.Cells != "" {
			where, err := ParseOnly(b.Cells)
			if err != nil {
				return p.errAt(path, "cells: %v", err)
			}
			for _, w := range where {
				out.Where = append(out.Where, Param{Name: w.Name, Value: w.Values[0]})
				if len(w.Values) > 1 {
					return p.errAt(path, "cells: one value per parameter in a bound's cells (%s)", w.Name)
				}
			}
		}
		s.Bounds = append(s.Bounds, out)
	}
	return nil
}

// check finds, before anything runs, what cannot work: targets that do not
// parse, an axis no template uses, a template naming no parameter, bounds
// that match no measure, options out of range.
func (p *parsed) check(s *Suite) error {
	specs, baseline := s.TargetSpecs(), s.Baseline
	if len(specs) == 0 {
		specs, baseline = []target.Given{installed}, "" // as Resolve runs it
	}
	if _, err := parseTargets(specs, baseline, false); err != nil {
		return p.errAt(targetsPath(specs, err), "%v", err)
	}
	if s.RoundsMax == 0 && s.Budget == 0 && (s.Rounds < 1 || (len(specs) > 1 && s.Rounds < 2)) {
		return p.errAt("$.rounds", "rounds must be at least 2 for a paired comparison (1 with a single target)")
	}
	proto := map[string]bool{"simple": true, "extended": true, "prepared": true}
	if !proto[s.Protocol] {
		return p.errAt("$.protocol", "protocol %q: want simple, extended or prepared", s.Protocol)
	}
	names := map[string]bool{}
	for _, ax := range s.Axes {
		names[ax.Name] = true
		if given, _ := p.line("$." + ax.Name); optionAxes[ax.Name] && given > 0 {
			return p.errAt("$."+ax.Name, "%s: given, and an axis of the matrix too, which sets it in every cell; drop one", ax.Name)
		}
		if ax.Name == "protocol" {
			for _, v := range ax.Values {
				if !proto[v] {
					return p.errAt("$.matrix.protocol", "protocol %q: want simple, extended or prepared", v)
				}
			}
		}
		if ax.Name == "scale" {
			for _, v := range ax.Values {
				if n, err := strconv.Atoi(v); err != nil || n < 1 {
					return p.errAt("$.matrix.scale", "scale %q: want a positive integer", v)
				}
			}
		}
	}
	for _, pr := range s.Params {
		names[pr.Name] = true
	}
	// Every template names known parameters; every axis is used.
	used := map[string]bool{}
	texts := []struct{ text, path string }{{s.Setup, "$.setup"}}
	for _, pr := range s.Params {
		texts = append(texts, struct{ text, path string }{pr.Value, "$.params." + pr.Name})
	}
	for _, t := range append(append([]target.Given(nil), s.Targets...), s.ownTemplates()...) { // a parameter a target names is used; a proxy's own templates are not the suite's
		for _, n := range templateNames(t.Templates()) {
			used[n] = true
		}
	}
	for i, d := range s.Disturb {
		texts = append(texts, struct{ text, path string }{d, fmt.Sprintf("$.disturb[%d]", i)})
	}
	for i, sc := range s.Scripts {
		texts = append(texts, struct{ text, path string }{sc.SQL + sc.Builtin, fmt.Sprintf("$.scripts[%d]", i)})
		if sc.File != "" {
			src, err := readScript(s.Dir, sc.File)
			if err != nil {
				return p.errAt(fmt.Sprintf("$.scripts[%d]", i), "script %v", err)
			}
			texts = append(texts, struct{ text, path string }{src, fmt.Sprintf("$.scripts[%d]", i)})
		}
	}
	for _, t := range texts {
		for _, n := range templateNames(t.text) {
			if !names[n] {
				return p.errAt(t.path, "{{%s}} names no axis or parameter (have %s)", n, strings.Join(sortedKeys(names), ", "))
			}
			used[n] = true
		}
		for n := range names {
			if strings.Contains(t.text, ":"+n) {
				used[n] = true // a pgbench variable of the script: -D NAME=VALUE per cell
			}
		}
	}
	for _, o := range s.Own {
		for _, f := range o.where {
			used[f.Name] = true // an axis that gives cells settings of their own
		}
	}
	for _, ax := range s.Axes {
		if !used[ax.Name] && !optionAxes[ax.Name] {
			return p.errAt("$.matrix."+ax.Name, "axis %s is used by no template: write {{%s}} in setup or a script (or :%s in a script), or drop it", ax.Name, ax.Name, ax.Name)
		}
	}
	for _, pr := range s.Params {
		if pr.Balancing != "" && used[pr.Name] {
			used[pr.Balancing] = true // its target is derived from that one's
		}
	}
	for _, pr := range s.Params {
		if !used[pr.Name] {
			return p.errAt("$.params."+pr.Name, "parameter %s is used by no template: write {{%s}} in setup, a script or a target (or :%s in a script), or drop it", pr.Name, pr.Name, pr.Name)
		}
	}
	// A define no script reads is given for nothing (a built-in script's
	// variables are not known here: with one, every define may be its).
	if !hasBuiltin(s.Scripts) {
		for name := range s.Defines {
			read := false
			for _, t := range texts {
				read = read || strings.Contains(t.text, ":"+name)
			}
			if !read {
				return p.errAt("$.defines."+name, "define %s is read by no script (:%s); drop it", name, name)
			}
		}
	}
	// Bounds: each parses and matches some measure at some client count.
	for i, b := range s.Bounds {
		path := fmt.Sprintf("$.bounds[%d]", i)
		if err := compare.CheckBounds(s.Clients, b.Bounds, stats.Options{Confidence: s.Confidence}); err != nil && len(s.Own) == 0 {
			return p.errAt(path, "%v", err)
		}
		for _, c := range s.Cells() { // each cell it bounds, at the cell's client counts
			if !c.Matches(b.Where) {
				continue
			}
			if err := compare.CheckBounds(s.CellLoad(c).Clients, b.Bounds, stats.Options{Confidence: s.Confidence}); err != nil {
				return p.errAt(path, "cell %s: %v", c.Key(), err)
			}
		}
		for _, w := range b.Where {
			if !names[w.Name] {
				return p.errAt(path, "cells: %s names no axis", w.Name)
			}
			if !hasValue(s.Axes, w) {
				return p.errAt(path, "cells: %s=%s is no cell of the matrix", w.Name, w.Value)
			}
		}
	}
	if err := compare.CheckClients(s.Expect, s.Clients); err != nil {
		return p.errAt("$.expect", "%v", err)
	}
	if s.Transactions > 0 && len(s.Disturb) > 0 {
		return p.errAt("$.disturb", "disturbances need a duration, not transactions")
	}
	return nil
}

func hasBuiltin(scripts []Script) bool {
	for _, sc := range scripts {
		if sc.Builtin != "" {
			return true
		}
	}
	return false
}

// CheckTargets checks the suite against the number of targets it runs on
// (its own, or --target's). With one target every cell is a sweep, and the
// parts of the file that only a comparison uses (bounds, baseline, rounds,
// slice) are given for nothing: an error at the part's line, except for a
// preset, which runs on the installed server alone unless --target names
// targets to compare (its rounds are for those): a note says so then, for
// the run to print.
func (s *Suite) CheckTargets(n int) (note string, err error) {
	if n > 1 || len(s.comparing) == 0 {
		return "", nil
	}
	why := map[string]string{
		"bounds":   "bounds judge a candidate against the baseline (a rule on a sweep is rule: or expect:)",
		"baseline": "there is no other target to compare with it",
		"rounds":   "rounds interleave targets",
		"slice":    "slices interleave targets",
	}
	if len(s.Targets) <= 1 && !strings.HasPrefix(s.File, "preset:") {
		g := s.comparing[0]
		return "", usageAt(s, g.line, "%s: given, but the suite runs on one target, a sweep of it, where %s: give a second target or drop %s",
			g.key, why[g.key], g.key)
	}
	var keys []string
	for _, g := range s.comparing {
		keys = append(keys, g.key+":")
	}
	return fmt.Sprintf("suite %s: one target, so every cell is a sweep of it; not used: %s (for comparing targets: give --target twice)",
		s.Name, strings.Join(keys, ", ")), nil
}

func hasValue(axes []Axis, p Param) bool {
	for _, a := range axes {
		if a.Name != p.Name {
			continue
		}
		for _, v := range a.Values {
			if v == p.Value {
				return true
			}
		}
	}
	return false
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// usageAt is an error at a suite file's line, for checks after parsing.
func usageAt(s *Suite, line int, format string, args ...any) error {
	if line > 0 {
		return usage.Errorf("%s:%d: %s", s.File, line, fmt.Sprintf(format, args...))
	}
	return usage.Errorf("%s: %s", s.File, fmt.Sprintf(format, args...))
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
