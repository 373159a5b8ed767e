// Package suite reads suite files: experiments that are not one sweep but a
// matrix of cells — named parameters (axes) crossed with each other — each
// run as an interleaved A/B over the same targets, with setup SQL and
// scripts templated by the cell's parameters, bounds per measure (and per
// cell), and presets of the studies pgscale grew from. It parses and
// checks (every error with its file and line) and expands the cells; the
// schedule is internal/schedule/cells; Resolve parses the targets a run
// of it runs on.
package suite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/usage"
)

// Suite is a parsed, checked suite file.
type Suite struct {
	// Name names the suite (the file's name without .yaml by default).
	Name        string
	Description string
	// File is where it was read from ("preset:NAME" for a preset); Dir the
	// directory that every path in it is relative to (scripts, setup,
	// target specs' trees, patches and definitions), absolute; Source its
	// text.
	File, Dir, Source string
	Quick             bool // the --quick variant

	Targets  []target.Given // --target specs, or definitions; default the installed build alone
	Baseline string
	Axes     []Axis
	// Params are single-valued parameters, templated like axes and set
	// from the command line (--param NAME=VALUE).
	Params []Param
	Setup  string // SQL run once per cell on every target, templated
	// Scripts are the workload, each templated; WorkloadInit says
	// whether pgbench's data is made on ephemeral targets.
	Scripts      []Script
	WorkloadInit bool

	Clients      []int
	Duration     time.Duration
	Transactions int
	Warmup       time.Duration
	Rounds       int
	// RoundsMax and Budget, for rounds: auto[:MAX|DURATION], make every
	// cell round until decided (compare.Rounds); Rounds is then 0.
	RoundsMax  int
	Budget     time.Duration
	Slice      time.Duration
	SliceGiven bool
	Protocol   string
	Scale      int
	Probes     bool
	Profile    bool
	// Count is what to count under Valgrind: the servers' (and a
	// proxy's) instructions per transaction (count: instructions), and
	// their caches too (count: instructions,cache); nothing when zero.
	// probeopt.ParseCount reads the file's value, once.
	Count      probeopt.Count
	Disturb    []string
	Defines    map[string]string
	Bounds     []Bound
	Confidence float64
	// Expect are the suite's decision rules, checked on every cell and
	// target, stated in the output, and failing the suite (exit code 1)
	// when one does not hold: the expect: list, and a rule: written as
	// one.
	Expect []compare.Expectation
	// Micro are the micro-benchmark cells (micro:).
	Micro []Micro
	// Own are the cells that run on targets of their own (cells:): each
	// entry replaces, in the cells it matches, the suite's targets of the
	// same names.
	Own []OwnTargets
	// Together are parameters given together (given_together:): one of a
	// group set with --param and another left at its default is said
	// before the run (Apart).
	Together [][]string

	// comparing are the parts of the file that only a comparison of two
	// or more targets uses (bounds, baseline, rounds, slice), each with
	// its line, for CheckTargets.
	comparing []givenPart
}

// givenPart is a part of the suite file as given: its key and line.
type givenPart struct {
	key  string
	line int
}

// Rule is the suite file's rule: a decision rule on a sweep, Measure at
// Clients grows less than Below per cent over its value at Against
// clients ("server CPU per transaction grows less than 20 % from 1 to 8
// clients: no optimisation needed"); Decision says what holding it means.
// It is the expectation MEASURE@c=CLIENTS<c=AGAINST+BELOW%, which expect:
// can write directly.
type Rule struct {
	Measure  string  `yaml:"measure"`
	Clients  int     `yaml:"clients"`
	Against  int     `yaml:"against"`
	Below    float64 `yaml:"below"`
	Decision string  `yaml:"decision"`
}

// Axis is one named parameter and the values the matrix crosses.
type Axis struct {
	Name   string
	Values []string
	line   int
}

// Param is one parameter's value (a cell has one per axis). A suite's
// parameter may instead derive a target from another's (params: NAME:
// {balancing: OTHER}): Balancing names that other parameter, whose target
// it is, balancing reads over its server's replicas (target.Spec.Balanced),
// until --param gives it a value of its own.
type Param struct {
	Name, Value string
	Balancing   string
}

// Shown is the parameter's value as a bundle's index and notes say it:
// its value, or "balancing OTHER" for one derived from another.
func (p Param) Shown() string {
	if p.Balancing != "" {
		return "balancing " + p.Balancing
	}
	return p.Value
}

// Script is one script of the workload: a built-in, a file, or inline SQL,
// with its weight.
type Script struct {
	Builtin, File, Name, SQL string
	Weight                   int
	line                     int
}

// Bound is a bound entry of the file, read once where the file is read:
// Spec as written (one bound, or a comma list), Bounds its value, with the
// cells it is limited to (Where: "all of these parameters have these
// values"; empty: every cell).
type Bound struct {
	Spec   string
	Bounds stats.Bounds
	Where  []Param
	line   int
}

// Defaults of what a suite file leaves out.
const (
	DefaultRounds = 6
	DefaultSlice  = 100 * time.Millisecond
	DefaultWarmup = time.Second
)

// fileSpec is the file as written: every field optional, so that the quick
// section overrides only what it names.
type fileSpec struct {
	Name         *string        `yaml:"name"`
	Description  *string        `yaml:"description"`
	Targets      []targetSpec   `yaml:"targets"`
	Baseline     *string        `yaml:"baseline"`
	Matrix       yaml.MapSlice  `yaml:"matrix"`
	Params       yaml.MapSlice  `yaml:"params"`
	Setup        *setupSpec     `yaml:"setup"`
	Scripts      []scriptSpec   `yaml:"scripts"`
	Init         *bool          `yaml:"init"`
	Clients      []int          `yaml:"clients"`
	Duration     *string        `yaml:"duration"`
	Transactions *int           `yaml:"transactions"`
	Warmup       *string        `yaml:"warmup"`
	Rounds       any            `yaml:"rounds"` // a number, or auto[:MAX|DURATION]
	Slice        *string        `yaml:"slice"`
	Protocol     *string        `yaml:"protocol"`
	Scale        *int           `yaml:"scale"`
	Probes       *bool          `yaml:"probes"`
	Profile      *bool          `yaml:"profile"`
	Count        *string        `yaml:"count"`
	Disturb      []string       `yaml:"disturb"`
	Defines      map[string]any `yaml:"defines"`
	Bounds       []boundSpec    `yaml:"bounds"`
	Confidence   *float64       `yaml:"confidence"`
	Rule         *Rule          `yaml:"rule"`
	Expect       []string       `yaml:"expect"`
	Micro        []microSpec    `yaml:"micro"`
	Cells        []ownSpec      `yaml:"cells"`
	Together     [][]string     `yaml:"given_together"`
	Quick        *fileSpec      `yaml:"quick"`
}

type scriptSpec struct {
	Builtin string `yaml:"builtin"`
	File    string `yaml:"file"`
	Name    string `yaml:"name"`
	SQL     string `yaml:"sql"`
	Weight  *int   `yaml:"weight"`
}

// targetSpec is a target as a suite file writes it: a spec string
// ("base=settings:"), or a map with its name and either spec: (a spec
// after NAME=) or proxy: (a proxy's definition, or the file holding it,
// as written: the proxy kind reads it).
type targetSpec struct {
	Text string // a spec string, as given
	// unquoted is a spec YAML read as a map: "a=settings: k=v".
	unquoted string
	Name     string  `yaml:"name"`
	Spec     string  `yaml:"spec"`
	Proxy    rawYAML `yaml:"proxy"`
}

// rawYAML is a part of the file as written, for the code that reads it.
type rawYAML []byte

// UnmarshalYAML keeps the part's text.
func (r *rawYAML) UnmarshalYAML(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// UnmarshalYAML takes a target written as a string or as a map.
func (t *targetSpec) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err == nil {
		t.Text = s
		return nil
	}
	// base=settings: unquoted reads as a map of one key and no value.
	var one map[string]any
	if err := unmarshal(&one); err == nil && len(one) == 1 {
		for k, v := range one {
			if strings.Contains(k, "=") {
				if v != nil {
					t.unquoted = k
				}
				t.Text = k + ":"
				return nil
			}
		}
	}
	var m struct {
		Name  string  `yaml:"name"`
		Spec  string  `yaml:"spec"`
		Proxy rawYAML `yaml:"proxy"`
	}
	if err := unmarshal(&m); err != nil {
		return err
	}
	t.Name, t.Spec, t.Proxy = m.Name, m.Spec, m.Proxy
	return nil
}

// spec is the target as given: a spec string, or a proxy's definition
// (or its file, relative to the suite file's directory dir) for the proxy
// kind to read.
func (t targetSpec) spec(dir string) (target.Given, error) {
	if t.unquoted != "" {
		return target.Given{}, fmt.Errorf(`a target spec is a string: quote it ("%s: ..."), as YAML reads a ': ' in a word as a key`, t.unquoted)
	}
	if t.Text != "" {
		return target.Given{Spec: target.RebaseSpec(t.Text, dir)}, nil
	}
	if t.Name == "" {
		return target.Given{}, fmt.Errorf("a target map needs its name: (name: bouncer)")
	}
	switch {
	case t.Proxy == nil:
		if t.Spec == "" {
			return target.Given{}, fmt.Errorf("target %s: give spec: (settings:, bin:DIR...) or proxy: (a definition, or its file)", t.Name)
		}
		return target.Given{Spec: target.RebaseSpec(t.Name+"="+t.Spec, dir)}, nil
	case t.Spec != "":
		return target.Given{}, fmt.Errorf("target %s: spec: and proxy: both given; keep one", t.Name)
	}
	return target.Given{Name: t.Name, Kind: target.ProxyKind, Def: t.Proxy, Dir: dir}, nil
}

// setupSpec is the setup SQL, written inline or as {file: PATH}, a file
// relative to the suite file.
type setupSpec struct {
	SQL  string
	File string `yaml:"file"`
}

// UnmarshalYAML takes the setup written as text or as {file: PATH}.
func (st *setupSpec) UnmarshalYAML(unmarshal func(any) error) error {
	if err := unmarshal(&st.SQL); err == nil {
		return nil
	}
	var m struct {
		File string `yaml:"file"`
	}
	if err := unmarshal(&m); err != nil {
		return err
	}
	st.File = m.File
	return nil
}

// boundSpec is "tps=-5%" or {bound: "tps=-5%", cells: "partitions=32"}.
type boundSpec struct {
	Bound string `yaml:"bound"`
	Cells string `yaml:"cells"`
}

// UnmarshalYAML takes a bound written as a plain string too.
func (b *boundSpec) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err == nil {
		b.Bound = s
		return nil
	}
	type plain boundSpec
	return unmarshal((*plain)(b))
}

// ReadFile reads and checks the suite file at path.
func ReadFile(path string, quick bool) (*Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
	// Every path in the file is relative to the file, wherever the
	// command runs (and a report of its bundle runs later).
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, usage.Wrap(err)
	}
	return Parse(path, dir, name, data, quick)
}

// Parse reads and checks a suite file's text: file names it in errors, dir
// is where its script files are, name its default name. Every error is a
// usage error that names the file and line: "suite.yaml:12:3: ...".
func Parse(file, dir, name string, data []byte, quick bool) (*Suite, error) {
	p := &parsed{file: file}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, p.yamlError(err)
	}
	p.ast = f
	var fs fileSpec
	if len(f.Docs) > 0 && f.Docs[0].Body != nil {
		if err := yaml.NodeToValue(f.Docs[0].Body, &fs, yaml.DisallowUnknownField()); err != nil {
			return nil, p.yamlError(err)
		}
	}
	if quick {
		if fs.Quick == nil {
			return nil, p.errAt("$", "this suite has no quick variant (a quick: section)")
		}
		overlay(&fs, fs.Quick)
	}
	s := &Suite{Name: name, File: file, Dir: dir, Source: string(data), Quick: quick,
		Rounds: DefaultRounds, Slice: DefaultSlice, Warmup: DefaultWarmup, Protocol: "prepared", Scale: 1, Probes: true,
		Clients: []int{1, 2, 4, 8}, Duration: 10 * time.Second, Confidence: 0.95}
	if err := p.fill(s, &fs); err != nil {
		return nil, err
	}
	if err := p.fillMicro(s, fs.Micro); err != nil {
		return nil, err
	}
	if err := p.fillOwn(s, fs.Cells, fs.Together); err != nil {
		return nil, err
	}
	if err := p.check(s); err != nil {
		return nil, err
	}
	if err := p.checkOwn(s); err != nil {
		return nil, err
	}
	return s, nil
}

// overlay puts the quick section's fields over the suite's.
func overlay(s, q *fileSpec) {
	if q.Name != nil {
		s.Name = q.Name
	}
	if q.Description != nil {
		s.Description = q.Description
	}
	if q.Targets != nil {
		s.Targets = q.Targets
	}
	if q.Baseline != nil {
		s.Baseline = q.Baseline
	}
	if q.Matrix != nil {
		s.Matrix = q.Matrix
	}
	for _, item := range q.Params { // the quick variant's parameters override one by one
		i := 0
		for i < len(s.Params) && s.Params[i].Key != item.Key {
			i++
		}
		if i < len(s.Params) {
			s.Params[i].Value = item.Value
		} else {
			s.Params = append(s.Params, item)
		}
	}
	if q.Setup != nil {
		s.Setup = q.Setup
	}
	if q.Scripts != nil {
		s.Scripts = q.Scripts
	}
	if q.Init != nil {
		s.Init = q.Init
	}
	if q.Clients != nil {
		s.Clients = q.Clients
	}
	if q.Duration != nil {
		s.Duration, s.Transactions = q.Duration, nil
	}
	if q.Transactions != nil {
		s.Transactions, s.Duration = q.Transactions, nil
	}
	if q.Warmup != nil {
		s.Warmup = q.Warmup
	}
	if q.Rounds != nil {
		s.Rounds = q.Rounds
	}
	if q.Slice != nil {
		s.Slice = q.Slice
	}
	if q.Protocol != nil {
		s.Protocol = q.Protocol
	}
	if q.Scale != nil {
		s.Scale = q.Scale
	}
	if q.Probes != nil {
		s.Probes = q.Probes
	}
	if q.Profile != nil {
		s.Profile = q.Profile
	}
	if q.Count != nil {
		s.Count = q.Count
	}
	if q.Disturb != nil {
		s.Disturb = q.Disturb
	}
	if q.Defines != nil {
		s.Defines = q.Defines
	}
	if q.Bounds != nil {
		s.Bounds = q.Bounds
	}
	if q.Confidence != nil {
		s.Confidence = q.Confidence
	}
	if q.Rule != nil {
		s.Rule = q.Rule
	}
	if q.Expect != nil {
		s.Expect = q.Expect
	}
	if q.Micro != nil {
		s.Micro = q.Micro
	}
	if q.Cells != nil {
		s.Cells = q.Cells
	}
	if q.Together != nil {
		s.Together = q.Together
	}
}

// parsed is a file being read: its name and syntax tree, for errors with
// a place.
type parsed struct {
	file string
	ast  *ast.File
}

// yamlError turns the YAML library's error into "file:line:col: message".
func (p *parsed) yamlError(err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		pos := ye.GetToken().Position
		msg := ye.GetMessage()
		if strings.Contains(msg, "fileSpec.Targets") {
			msg = `a target spec is a string: quote it ("base=settings:"), as YAML reads a ':' at the end of a word as a key`
		}
		return usage.Errorf("%s:%d:%d: %s", p.file, pos.Line, pos.Column, msg)
	}
	return usage.Errorf("%s: %v", p.file, err)
}

// line is where the node at path ("$.matrix.rows") is; 0 when unknown.
func (p *parsed) line(path string) (int, int) {
	if p.ast == nil {
		return 0, 0
	}
	yp, err := yaml.PathString(path)
	if err != nil {
		return 0, 0
	}
	n, err := yp.FilterFile(p.ast)
	if err != nil || n == nil || n.GetToken() == nil {
		return 0, 0
	}
	return n.GetToken().Position.Line, n.GetToken().Position.Column
}

// errAt is a usage error at the node at path.
func (p *parsed) errAt(path, format string, args ...any) error {
	if l, c := p.line(path); l > 0 {
		return usage.Errorf("%s:%d:%d: %s", p.file, l, c, fmt.Sprintf(format, args...))
	}
	return usage.Errorf("%s: %s", p.file, fmt.Sprintf(format, args...))
}

// duration reads "10s", "500ms" or a bare number of seconds.
func duration(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 {
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration (10s, 500ms, or seconds)", s)
	}
	return d, nil
}

// value is a YAML scalar as text.
// balancing reads a parameter written {balancing: OTHER}: ok when it is
// one, and an error when it is a map of another shape.
func balancing(v any) (from string, ok bool, err error) {
	var m map[string]any
	switch x := v.(type) {
	case map[string]any:
		m = x
	case yaml.MapSlice:
		m = map[string]any{}
		for _, item := range x {
			m[fmt.Sprint(item.Key)] = item.Value
		}
	default:
		return "", false, nil
	}
	want := fmt.Errorf("a parameter is a value, or {balancing: OTHER}: OTHER's target balancing reads over its server's replicas")
	f, isText := m["balancing"].(string)
	if len(m) != 1 || !isText || f == "" {
		return "", true, want
	}
	return f, true, nil
}

func value(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(x), nil
	case nil:
		return "", fmt.Errorf("a value is missing")
	}
	return "", fmt.Errorf("%v is not a single value", v)
}

// SetRounds sets the cells' rounds: a fixed number, or rounds until
// decided (compare.Rounds); every cell's, those of a cells: entry too.
func (s *Suite) SetRounds(r compare.Rounds) {
	s.Rounds, s.RoundsMax, s.Budget = r.N, r.Max, r.Budget
	for i := range s.Own {
		s.Own[i].Rounds = nil
	}
}

// SetProfile records a CPU profile of the servers in every step
// (--profile, as the file's profile: true does).
func (s *Suite) SetProfile() error {
	s.Profile = true
	return s.profileTurns()
}

// profileTurns makes a suite that profiles run whole-step turns: a
// profile is recorded over a target's whole step, which slices share
// between the targets, so a profile in slices would record nothing. The
// suite's default slices give way (slice: 0); a file that asks for slices
// itself (slice: above 0) is refused at that line, in the file's words:
// it chose what profiles cannot have.
func (s *Suite) profileTurns() error {
	if !s.Profile || s.Slice == 0 {
		return nil
	}
	if s.SliceGiven {
		line := 0
		for _, g := range s.comparing {
			if g.key == "slice" {
				line = g.line
			}
		}
		return usageAt(s, line, "slice: %v shares each step between the targets, and a profile (profile: true, or --profile) is recorded over a target's whole step: make it slice: 0, or drop it (a suite that profiles runs whole-step turns)", s.Slice)
	}
	s.Slice = 0
	return nil
}

// RoundsSpec is the cells' rounds as compare.Rounds.
func (s *Suite) RoundsSpec() compare.Rounds {
	if s.RoundsMax > 0 || s.Budget > 0 {
		return compare.Rounds{Auto: true, Max: s.RoundsMax, Budget: s.Budget}
	}
	return compare.Rounds{N: s.Rounds}
}
