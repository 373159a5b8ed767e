package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Write writes f to path atomically: a temporary file in the same
// directory, fsynced, then renamed over path.
func Write(path string, f *File) error {
	f.Schema, f.Version = Schema, Version
	if err := f.Validate(); err != nil {
		return fmt.Errorf("refusing to write an invalid result: %w", err)
	}
	data, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Read reads and validates a result file.
func Read(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: not a pgscale result file: %v", path, err)
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &f, nil
}

// Validate checks what every reader relies on.
func (f *File) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if f.Schema != Schema {
		bad("schema is %q, want %q", f.Schema, Schema)
	}
	if f.Version < 1 || f.Version > Version {
		bad("schema version %d is not one this pgscale reads (1..%d)", f.Version, Version)
	}
	if f.Complete && f.Reason != "" {
		bad("complete file has an incomplete_reason")
	}
	if !f.Complete && f.Reason == "" {
		bad("incomplete file has no incomplete_reason")
	}
	if f.Complete && len(f.Steps) == 0 {
		bad("complete file has no steps")
	}
	if len(f.Workload.Scripts) == 0 {
		bad("workload has no scripts")
	}
	for i, s := range f.Steps {
		if s.Clients < 1 {
			bad("step %d: clients %d", i, s.Clients)
		}
		if s.Summary.TPS < 0 || s.ElapsedS < 0 {
			bad("step %d: negative tps or elapsed time", i)
		}
		var n int64
		for _, iv := range s.Intervals {
			n += iv.Transactions
		}
		if n != s.Summary.Transactions {
			bad("step %d: intervals hold %d transactions, summary %d", i, n, s.Summary.Transactions)
		}
		if s.Complete != (s.Reason == "") {
			bad("step %d: complete=%v with reason %q", i, s.Complete, s.Reason)
		}
		for j := range s.Disturbances {
			if err := s.Disturbances[j].validate(); err != nil {
				bad("step %d: %v", i, err)
			}
		}
	}
	return errors.Join(errs...)
}
