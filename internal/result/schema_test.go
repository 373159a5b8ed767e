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

// evidenceExample is one kind of evidence in TestEvidenceSchemaApplies:
// how to set a valid example of it, and how to break it.
type evidenceExample struct {
	set   func(p *result.Probes)
	spoil func(e map[string]any)
}

// evidenceExamples are the kinds of evidence TestEvidenceSchemaApplies
// knows, by name; a probe's own test file (evidence_NAME_test.go) may add
// its kind from an init function instead of editing this one.
var evidenceExamples = map[string]evidenceExample{
	"process": {func(p *result.Probes) { p.SetProcess(&result.ProcessStats{CPUs: 2}) },
		func(e map[string]any) { e["cpus"] = 0 }},
	"counters": {func(p *result.Probes) { p.SetCounters(&result.Counters{Supported: true, Cycles: 10, Instructions: 20}) },
		func(e map[string]any) { e["supported"] = false }},
	"waits": {func(p *result.Probes) {
		p.SetWaits(&result.Waits{Source: "pg_stat_activity", PeriodMs: 50, Samples: 1})
	},
		func(e map[string]any) { e["source"] = "guessed" }},
	"locks": {func(p *result.Probes) { p.SetLocks(&result.Locks{Snapshots: 1, FastPathSlots: 16}) },
		func(e map[string]any) { e["fast_path_slots"] = 0 }},
	"statements": {func(p *result.Probes) { p.SetStatements(&result.Statements{ServerMs: 1, Calls: 1}) },
		func(e map[string]any) { e["calls"] = -1 }},
	"profile": {func(p *result.Probes) { p.SetProfile(&result.Profile{File: "p.pprof", Samples: 1}) },
		func(e map[string]any) { e["unit"] = "furlongs" }},
	"instructions": {func(p *result.Probes) {
		p.SetInstructions(&result.Instructions{Tool: "callgrind", Transactions: 1, PerTxn: 1, Kernel: "not counted",
			ByKind: []result.InstructionGroup{{Kind: "client backend", Processes: 1}}})
	}, func(e map[string]any) { e["tool"] = "guessed" }},
	"upstreams": {func(p *result.Probes) {
		p.SetUpstreams(&result.Upstreams{Servers: []result.UpstreamStat{{Name: "a", Role: "primary", Transactions: 5, Share: 0.5},
			{Name: "a-replica1", Role: "replica", Transactions: 5, Share: 0.5}}})
	}, func(e map[string]any) { e["servers"].([]any)[1].(map[string]any)["role"] = "standby" }},
}

// TestEvidenceSchemaApplies: each probe's schema file is applied to its
// evidence: a file that breaks it is invalid.
func TestEvidenceSchemaApplies(t *testing.T) {
	f := sample()
	f.Schema, f.Version = result.Schema, result.Version
	p := &result.Probes{ElapsedS: 1}
	for _, ex := range evidenceExamples {
		ex.set(p)
	}
	f.Steps[0].Probes = p
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := result.ValidateJSON(data); err != nil {
		t.Fatalf("a file with every probe's evidence: %v", err)
	}
	for _, name := range evidenceNames(t) {
		ex, ok := evidenceExamples[name]
		if !ok {
			t.Errorf("%s: no example of its evidence in this test (evidenceExamples, or an init in evidence_%s_test.go)", name, name)
			continue
		}
		brk := ex.spoil
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		probes := m["steps"].([]any)[0].(map[string]any)["probes"].(map[string]any)
		brk(probes[name].(map[string]any))
		bad, _ := json.Marshal(m)
		if err := result.ValidateJSON(bad); err == nil {
			t.Errorf("%s: evidence that breaks evidence_%s.schema.json was accepted", name, name)
		}
	}
}
