package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pgscale/pgscale/internal/secret"
)

// Suite index files: a suite's bundle directory holds one, naming the
// suite, its cells and their result files (ordinary result files, one per
// cell and target, in the cells' directories).
const (
	SuiteSchema  = "pgscale.suite"
	SuiteVersion = 1
	// SuiteIndexFile is the index's name in a bundle.
	SuiteIndexFile = "index.json"
)

// Cell statuses.
const (
	CellComplete   = "complete"
	CellIncomplete = "incomplete"
	CellMissing    = "missing"
)

// SuiteIndex is a bundle's index.
type SuiteIndex struct {
	Schema  string `json:"schema"`
	Version int    `json:"version"`
	Pgscale string `json:"pgscale_version"`
	Name    string `json:"name"`
	// File is where the suite came from ("preset:NAME" or a path); Source
	// its text, so that --resume can tell it is the same suite.
	File   string `json:"file"`
	Source string `json:"source"`
	Quick  bool   `json:"quick,omitempty"`
	// Params are the parameters as set for the run (--param).
	Params   map[string]string `json:"params,omitempty"`
	Command  []string          `json:"command"`
	Started  time.Time         `json:"started"`
	Finished time.Time         `json:"finished"`
	Targets  []ABTarget        `json:"targets"` // File is empty: each cell has its own
	Baseline string            `json:"baseline"`
	Axes     []SuiteAxis       `json:"axes"`
	Cells    []SuiteCell       `json:"cells"`
	// Rules are the suite's decision rules as the run read them (expect:,
	// and a rule: written as one), so that a report of the bundle states
	// them wherever it runs, without the suite's files.
	Rules []SuiteRule `json:"rules,omitempty"`
}

// SuiteRule is one decision rule of a suite: its expectation as written
// (QUANTITY@c=N OP VALUE) and what holding it means.
type SuiteRule struct {
	Spec     string `json:"spec"`
	Decision string `json:"decision,omitempty"`
}

// SuiteAxis is one axis of the matrix and its values.
type SuiteAxis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// SuiteCell is one cell of the matrix and where its result files are.
type SuiteCell struct {
	Key    string            `json:"key"` // "partitions=32,rows=100"
	Params map[string]string `json:"params"`
	// Dir is the cell's directory, relative to the bundle.
	Dir string `json:"dir"`
	// Status is complete, incomplete (Reason says why) or missing (not
	// run: --only, or the suite stopped before it).
	Status string `json:"status"`
	Reason string `json:"incomplete_reason,omitempty"`
	// Files are the cell's result files, relative to Dir, baseline first.
	Files []string `json:"files,omitempty"`
}

// Validate checks what readers of an index rely on.
func (x *SuiteIndex) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if x.Schema != SuiteSchema {
		bad("schema is %q, want %q", x.Schema, SuiteSchema)
	}
	if x.Version < 1 || x.Version > SuiteVersion {
		bad("suite index version %d is not one this pgscale reads (1..%d)", x.Version, SuiteVersion)
	}
	if x.Name == "" || len(x.Targets) == 0 {
		bad("no suite name or targets")
	}
	for _, c := range x.Cells {
		switch c.Status {
		case CellComplete, CellIncomplete, CellMissing:
		default:
			bad("cell %s: status %q", c.Key, c.Status)
		}
		if c.Status == CellIncomplete && c.Reason == "" {
			bad("cell %s: incomplete with no reason", c.Key)
		}
		if c.Dir == "" || filepath.IsAbs(c.Dir) || c.Dir != filepath.Clean(c.Dir) || c.Dir == ".." || len(c.Dir) > 2 && c.Dir[:3] == "../" {
			bad("cell %s: directory %q is not inside the bundle", c.Key, c.Dir)
		}
	}
	for _, a := range x.Command {
		if secret.Leaks(a) {
			bad("command line holds an unredacted password")
		}
	}
	return errors.Join(errs...)
}

// WriteSuiteIndex writes a bundle's index atomically.
func WriteSuiteIndex(dir string, x *SuiteIndex) error {
	x.Schema, x.Version = SuiteSchema, SuiteVersion
	if err := x.Validate(); err != nil {
		return fmt.Errorf("refusing to write an invalid suite index: %w", err)
	}
	data, err := json.MarshalIndent(x, "", " ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, SuiteIndexFile), append(data, '\n'))
}

// ReadSuiteIndex reads and checks a bundle's index.
func ReadSuiteIndex(dir string) (*SuiteIndex, error) {
	path := filepath.Join(dir, SuiteIndexFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var x SuiteIndex
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("%s: not a pgscale suite index: %v", path, err)
	}
	if err := x.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &x, nil
}

// IsSuiteBundle reports whether dir holds a suite index.
func IsSuiteBundle(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, SuiteIndexFile))
	return err == nil
}
