package result_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/result"
)

// evidenceNames are the registered kinds of evidence in result.Probes:
// each probe's evidence, named by the probe.
func evidenceNames(t *testing.T) []string {
	t.Helper()
	names := result.EvidenceNames()
	if len(names) == 0 {
		t.Fatal("result.Probes has no evidence registered")
	}
	return names
}

// TestEvidenceSchemas: every probe's evidence in result.Probes has its
// own schema file, evidence_NAME.schema.json, which the schema of a step's
// probes refers to (added when the schema loads, so schema.json names no
// probe's evidence), and its name among the probes a cost may name; and
// nothing else does.
func TestEvidenceSchemas(t *testing.T) {
	raw, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs struct {
			Probes struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"probes"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	props := schema.Defs.Probes.Properties
	var costs struct {
		Items struct {
			Properties struct {
				Probe struct {
					Pattern string `json:"pattern"`
				} `json:"probe"`
			} `json:"properties"`
		} `json:"items"`
	}
	if err := json.Unmarshal(props["costs"], &costs); err != nil {
		t.Fatal(err)
	}
	names := evidenceNames(t)
	for _, name := range names {
		file := "evidence_" + name + ".schema.json"
		if _, err := os.Stat(file); err != nil {
			t.Errorf("%s: no schema file of its own: %v", name, err)
		}
		if _, ok := props[name]; ok {
			t.Errorf("%s: schema.json's probes names it: its schema is %s alone, added when the schema loads", name, file)
		}
		if ok, err := regexp.MatchString(costs.Items.Properties.Probe.Pattern, name); err != nil || !ok {
			t.Errorf("%s: not a name a cost may carry in schema.json (pattern %q)", name, costs.Items.Properties.Probe.Pattern)
		}
	}
	files, err := filepath.Glob("evidence_*.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "evidence_"), ".schema.json")
		if !slices.Contains(names, name) {
			t.Errorf("%s: no evidence %q registered in result.Probes", file, name)
		}
	}
	for name := range props {
		if name != "elapsed_s" && name != "costs" && name != "unavailable" {
			t.Errorf("schema.json's probes.%s is no part of result.Probes", name)
		}
	}
}

// evidenceCase is one kind of evidence as the schema tests use it: a
// value its schema accepts (set records it) and a change to its JSON that
// its schema refuses (breaks).
type evidenceCase struct {
	set    func(p *result.Probes)
	breaks func(e map[string]any)
}

// evidenceCases are the kinds' cases, registered by each kind's test file
// (evidence_NAME_test.go, beside evidence_NAME.go): adding a probe's
// evidence adds its case and changes no shared test.
var evidenceCases = map[string]evidenceCase{}

func registerEvidenceCase(name string, c evidenceCase) {
	if _, ok := evidenceCases[name]; ok {
		panic("evidence case " + name + " registered twice")
	}
	evidenceCases[name] = c
}

// TestEvidenceSchemaApplies: each probe's schema file is applied to its
// evidence: a file with every kind's evidence is valid, and one that
// breaks a kind's is not.
func TestEvidenceSchemaApplies(t *testing.T) {
	f := sample()
	f.Schema, f.Version = result.Schema, result.Version
	p := &result.Probes{ElapsedS: 1}
	names := evidenceNames(t)
	for _, name := range names {
		c, ok := evidenceCases[name]
		if !ok {
			t.Errorf("%s: no test case of its own: evidence_%s_test.go registers one (registerEvidenceCase)", name, name)
			continue
		}
		c.set(p)
	}
	for name := range evidenceCases {
		if !slices.Contains(names, name) {
			t.Errorf("evidence_%s_test.go: a test case for %q, which is no evidence in result.Probes", name, name)
		}
	}
	f.Steps[0].Probes = p
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := result.ValidateJSON(data); err != nil {
		t.Fatalf("a file with every probe's evidence: %v", err)
	}
	for _, name := range names {
		c, ok := evidenceCases[name]
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		probes := m["steps"].([]any)[0].(map[string]any)["probes"].(map[string]any)
		c.breaks(probes[name].(map[string]any))
		bad, _ := json.Marshal(m)
		if err := result.ValidateJSON(bad); err == nil {
			t.Errorf("%s: evidence that breaks evidence_%s.schema.json was accepted", name, name)
		}
	}
}
