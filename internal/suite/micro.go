package suite

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/micro"
)

// Micro is a micro-benchmark cell of a suite: a project's own benchmark
// command run in each target's tree in interleaved rounds (schedule/microbench),
// judged beside the macro cells (docs/micro.md).
type Micro struct {
	// Name names the cell and its run file (micro-NAME.json).
	Name string
	// Cmd is the command (sh -c), Format its output's format, Output the
	// file it writes instead of its standard output.
	Cmd, Format, Output string
	// Trees are each target's tree, by target name: PATH[@REV][+PATCH...],
	// a PATH relative to the suite file; a target it does not name runs
	// the command in the source it builds from (src:, its one ext=
	// extension, a proxy's build:).
	Trees map[string]string
	// Bounds are micro-benchmark bounds (micro:PATTERN[@UNIT]=±N%), read
	// where the file is; Groups the groups to sum up, GroupUnit the
	// measure they sum up.
	Bounds    []micro.Bound
	Groups    []string
	GroupUnit string
	// Rounds is the cell's rounds; zero: 10, or auto:30 with bounds.
	Rounds  compare.Rounds
	Timeout time.Duration
}

// microSpec is a micro cell as the file writes it.
type microSpec struct {
	Name      string            `yaml:"name"`
	Cmd       string            `yaml:"cmd"`
	Format    string            `yaml:"format"`
	Output    string            `yaml:"output"`
	Trees     map[string]string `yaml:"trees"`
	Bounds    []string          `yaml:"bounds"`
	Groups    []string          `yaml:"groups"`
	GroupUnit string            `yaml:"group_unit"`
	Rounds    any               `yaml:"rounds"`
	Timeout   string            `yaml:"timeout"`
}

var microName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// fillMicro reads the micro: cells, each checked with its place.
func (p *parsed) fillMicro(s *Suite, specs []microSpec) error {
	seen := map[string]bool{}
	for i, m := range specs {
		path := fmt.Sprintf("$.micro[%d]", i)
		if !microName.MatchString(m.Name) {
			return p.errAt(path, "a micro cell needs a name: of letters, digits, _, . and - (it names its run file)")
		}
		if seen[m.Name] {
			return p.errAt(path, "micro cell %s is given twice", m.Name)
		}
		seen[m.Name] = true
		if strings.TrimSpace(m.Cmd) == "" {
			return p.errAt(path, "micro cell %s: give its benchmark command (cmd: go test -run '^$' -bench .)", m.Name)
		}
		c := Micro{Name: m.Name, Cmd: m.Cmd, Format: m.Format, Output: m.Output, Groups: m.Groups, GroupUnit: m.GroupUnit, Trees: map[string]string{}}
		if c.Format == "" {
			c.Format = "go"
		}
		format, err := micro.LookupFormat(c.Format)
		if err != nil {
			return p.errAt(path+".format", "micro cell %s: %v", m.Name, err)
		}
		if format.Tree != nil && c.Output == "" {
			return p.errAt(path, "micro cell %s: the %s format reads the files the command writes under a directory: name it with output: (%s)", m.Name, format.Name, format.Help("--output"))
		}
		bounds, err := micro.ParseBounds(m.Bounds)
		if err != nil {
			return p.errAt(path+".bounds", "micro cell %s: %v", m.Name, err)
		}
		c.Bounds = bounds
		for name, tree := range m.Trees {
			if tree == "" {
				return p.errAt(path+".trees", "micro cell %s: target %s has no tree", m.Name, name)
			}
			if !filepath.IsAbs(tree) && !strings.HasPrefix(tree, "~/") {
				tree = filepath.Join(s.Dir, tree)
			}
			c.Trees[name] = tree
		}
		if m.Rounds != nil {
			r, err := compare.ParseRounds(fmt.Sprint(m.Rounds))
			if err != nil {
				return p.errAt(path+".rounds", "micro cell %s: %v", m.Name, err)
			}
			c.Rounds = r
		}
		if m.Timeout != "" {
			d, err := time.ParseDuration(m.Timeout)
			if err != nil || d <= 0 {
				return p.errAt(path+".timeout", "micro cell %s: timeout: want a positive duration such as 5m", m.Name)
			}
			c.Timeout = d
		}
		s.Micro = append(s.Micro, c)
	}
	return nil
}
