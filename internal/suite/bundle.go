package suite

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// Bundle is a suite's bundle as read: its index, every cell's result files
// and the decision rules the suite states, ready for compare.CompareSuite.
type Bundle struct {
	Index *result.SuiteIndex
	// Cells holds the files of each of Index.Cells, baseline first; none
	// for a cell that was not run.
	Cells [][]compare.Input
	// Files are every cell's files, in cell order.
	Files []compare.Input
	// Expect are the suite's decision rules, as the index recorded them.
	Expect []compare.Expectation
}

// ReadBundle reads a suite's bundle: its index and every cell's result
// files, and the decision rules from the suite's source.
func ReadBundle(dir string) (*Bundle, error) {
	x, err := result.ReadSuiteIndex(dir)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	b := &Bundle{Index: x, Cells: make([][]compare.Input, len(x.Cells))}
	if b.Expect, err = bundleRules(x); err != nil {
		return nil, usage.Errorf("%s: %v", dir, err)
	}
	for i, c := range x.Cells {
		var ps []compare.Param
		for _, a := range x.Axes {
			ps = append(ps, compare.Param{Name: a.Name, Value: c.Params[a.Name]})
		}
		for _, name := range c.Files {
			path := filepath.Join(dir, c.Dir, name)
			f, err := result.Read(path)
			if err != nil {
				return nil, usage.Wrap(err)
			}
			in := compare.Input{Name: f.Target.Name, File: f, Cell: ps, Path: path}
			b.Cells[i] = append(b.Cells[i], in)
			b.Files = append(b.Files, in)
		}
	}
	return b, nil
}

// bundleRules are the suite's decision rules: as the index recorded them,
// or, in a bundle written before it did, read from the suite's source
// (its files relative to the suite file's directory, as when it ran). A
// source that no longer reads is an error, not a suite without rules.
func bundleRules(x *result.SuiteIndex) ([]compare.Expectation, error) {
	if len(x.Rules) > 0 {
		var out []compare.Expectation
		for _, r := range x.Rules {
			e, err := compare.ParseExpectation(r.Spec)
			if err != nil {
				return nil, fmt.Errorf("the index's decision rule %q: %v", r.Spec, err)
			}
			e.Decision = r.Decision
			out = append(out, e)
		}
		return out, nil
	}
	dir := ""
	if !strings.HasPrefix(x.File, "preset:") {
		dir = filepath.Dir(x.File)
	}
	s, err := Parse(x.File, dir, x.Name, []byte(x.Source), x.Quick)
	if err != nil {
		return nil, fmt.Errorf("the suite's decision rules cannot be read from its source, kept in the index: %v", err)
	}
	return s.Expect, nil
}
