package suite

import (
	"path/filepath"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/usage"
)

// ReadBundle reads a suite's bundle — its index and every cell's result
// files — and compares its cells, with the decision rules the suite states.
// With bounds set they judge every cell instead of the bounds the cells
// recorded. It returns the comparison and every file read.
func ReadBundle(dir string, bounds *stats.Bounds, opt stats.Options) (*compare.Suite, []compare.Input, error) {
	x, err := result.ReadSuiteIndex(dir)
	if err != nil {
		return nil, nil, usage.Wrap(err)
	}
	var expect []compare.Expectation
	if s, err := Parse(x.File, "", x.Name, []byte(x.Source), x.Quick); err == nil {
		expect = s.Expect
	}
	var all []compare.Input
	cells := make([][]compare.Input, len(x.Cells))
	for i, c := range x.Cells {
		var ps []compare.Param
		for _, a := range x.Axes {
			ps = append(ps, compare.Param{Name: a.Name, Value: c.Params[a.Name]})
		}
		for _, name := range c.Files {
			path := filepath.Join(dir, c.Dir, name)
			f, err := result.Read(path)
			if err != nil {
				return nil, nil, usage.Wrap(err)
			}
			in := compare.Input{Name: f.Target.Name, File: f, Cell: ps, Path: path}
			cells[i] = append(cells[i], in)
			all = append(all, in)
		}
	}
	s, err := compare.CompareSuite(x, cells, compare.SuiteOptions{Expect: expect, Bounds: bounds, Stats: opt})
	if err != nil {
		return nil, nil, usage.Wrap(err)
	}
	return s, all, nil
}
