package result

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pgscale/pgscale/internal/secret"
)

// Write writes f to path atomically: a temporary file in the same
// directory, fsynced, then renamed over path.
func Write(path string, f *File) error {
	f.Schema, f.Version = Schema, Version
	normalize(f)
	if err := f.Validate(); err != nil {
		return &RefusedError{What: "an invalid result", Err: err}
	}
	data, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return err
	}
	if err := ValidateJSON(data); err != nil {
		return &RefusedError{What: "a result that breaks its schema", Err: err}
	}
	if where, err := secret.FindInJSON(data); err != nil {
		return err
	} else if where != "" {
		// A password where pgscale does not put one (a setting such as
		// primary_conninfo, a script's text): the result is still
		// written, without it.
		if data, err = secret.RedactJSON(data, " "); err != nil {
			return err
		}
	}
	return WriteFileAtomic(path, append(data, '\n'))
}

// RefusedError is a result Write would not write, whatever the place: it
// breaks the file's rules or its schema (a bug of pgscale's, which the
// message names). Writing it elsewhere is refused the same.
type RefusedError struct {
	What string // "an invalid result"
	Err  error
}

func (e *RefusedError) Error() string { return "refusing to write " + e.What + ": " + e.Err.Error() }

// Unwrap returns what is wrong with the result.
func (e *RefusedError) Unwrap() error { return e.Err }

// normalize gives every list the schema requires an empty value instead of
// nil (JSON null), so that a run that measured little (no client ever
// connected, no interval ended) still writes its incomplete result.
func normalize(f *File) {
	if f.Command == nil {
		f.Command = []string{}
	}
	if f.Steps == nil {
		f.Steps = []Step{}
	}
	for i := range f.Steps {
		if f.Steps[i].Intervals == nil {
			f.Steps[i].Intervals = []Interval{}
		}
	}
	if f.AB != nil {
		if f.AB.Order == nil {
			f.AB.Order = [][]string{}
		}
		if f.AB.Targets == nil {
			f.AB.Targets = []ABTarget{}
		}
	}
	if f.Diagnosis != nil && f.Diagnosis.Steps == nil {
		f.Diagnosis.Steps = []StepVerdict{}
	}
}

// WriteFileAtomic writes data to path atomically: a temporary file in the
// same directory, fsynced, then renamed over path. Reports written beside
// result files (verdict, markdown) use it too.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
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

// schemaFiles are the result file's JSON Schema: schema.json and each
// probe's evidence_NAME.schema.json, which the schema of a step's probes
// refers to under the probe's name (withEvidence).
//
//go:embed schema.json evidence_*.schema.json
var schemaFiles embed.FS

// schemaURL is schema.json's $id, the URL its references resolve against.
const schemaURL = "pgscale-result.schema.json"

// compiledSchema compiles the schema files once.
var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.UseLoader(embeddedOnly{})
	names, err := fs.Glob(schemaFiles, "*.json")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		data, err := schemaFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		url := name
		if name == "schema.json" {
			url = schemaURL
			if err := withEvidence(doc); err != nil {
				return nil, err
			}
		}
		if err := c.AddResource(url, doc); err != nil {
			return nil, err
		}
	}
	return c.Compile(schemaURL)
})

// withEvidence puts into schema.json's probes, for every registered kind
// of evidence, its property: a reference to its own schema file, which
// must be embedded. So a probe's schema is its own file, and schema.json
// does not change when one is added.
func withEvidence(doc any) error {
	root, _ := doc.(map[string]any)
	defs, _ := root["$defs"].(map[string]any)
	probes, _ := defs["probes"].(map[string]any)
	props, _ := probes["properties"].(map[string]any)
	if props == nil {
		return fmt.Errorf("schema.json: no $defs.probes.properties for the probes' evidence")
	}
	for _, name := range EvidenceNames() {
		file := "evidence_" + name + ".schema.json"
		if _, err := fs.Stat(schemaFiles, file); err != nil {
			return fmt.Errorf("evidence %s has no schema file %s", name, file)
		}
		if _, ok := props[name]; ok {
			return fmt.Errorf("schema.json: probes.%s is a probe's evidence: its schema is %s alone", name, file)
		}
		props[name] = map[string]any{"$ref": file}
	}
	return nil
}

// embeddedOnly is the schema's loader: a reference to a file that is not
// embedded fails, rather than being read from the working directory.
type embeddedOnly struct{}

func (embeddedOnly) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is not one of the embedded schema files", url)
}

// ValidateJSON checks a result file's bytes against the JSON Schema
// (schema.json and the evidence_NAME.schema.json files it refers to,
// documented in docs/result-schema.md).
func ValidateJSON(data []byte) error {
	sch, err := compiledSchema()
	if err != nil {
		return fmt.Errorf("result schema: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(doc)
}

// Read reads a result file and validates it against the JSON Schema and the
// rules the schema cannot say.
func Read(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := ValidateJSON(data); err != nil {
		return nil, fmt.Errorf("%s: not a valid pgscale result file: %v", path, err)
	}
	if err := noPassword(data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
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

// noPassword finds a password anywhere in a result file's JSON — a
// setting such as primary_conninfo, a -D value —, not only where Validate
// looks (the command line, the A/B target specs).
func noPassword(data []byte) error {
	where, err := secret.FindInJSON(data)
	if err != nil {
		return err
	}
	if where != "" {
		return fmt.Errorf("%s holds an unredacted password", where)
	}
	return nil
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
	for _, a := range f.Command {
		if secret.Leaks(a) {
			bad("command line holds an unredacted password")
		}
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
		for j := range s.Outages {
			if err := s.Outages[j].validate(); err != nil {
				bad("step %d: %v", i, err)
			}
		}
	}
	if f.AB != nil {
		errs = append(errs, f.AB.validate(f)...)
	}
	return errors.Join(errs...)
}
