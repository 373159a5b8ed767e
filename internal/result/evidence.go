package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/pgscale/pgscale/internal/probeid"
)

// evidenceKind is one probe's evidence as registered: the probe (its name,
// which the evidence is written under in a step's probes, and its rank,
// its place among the others), and its Go type (a struct, held by
// pointer).
type evidenceKind struct {
	probeid.ID
	typ reflect.Type
}

// evidenceKinds are the registered kinds of evidence, by rank: filled by
// registerEvidence when the program starts, only read after.
var evidenceKinds []evidenceKind

// registerEvidence registers T as the evidence the probe id writes, under
// its name, in rank order among the others; its schema is
// evidence_NAME.schema.json. Each kind's file (evidence_NAME.go) calls it
// from an init function: adding a probe's evidence changes no other file.
func registerEvidence[T any](id probeid.ID) {
	for _, k := range evidenceKinds {
		if k.Name == id.Name {
			panic("result: evidence " + id.Name + " registered twice")
		}
	}
	evidenceKinds = append(evidenceKinds, evidenceKind{ID: id, typ: reflect.TypeFor[T]()})
	sort.SliceStable(evidenceKinds, func(i, j int) bool { return evidenceKinds[i].Rank < evidenceKinds[j].Rank })
}

// EvidenceNames names the registered kinds of evidence, in the order a
// step's probes hold them: each is a probe's name.
func EvidenceNames() []string {
	out := make([]string, len(evidenceKinds))
	for i, k := range evidenceKinds {
		out[i] = k.Name
	}
	return out
}

// evidenceOf returns the kind registered under name, or nil.
func evidenceOf(name string) *evidenceKind {
	for i := range evidenceKinds {
		if evidenceKinds[i].Name == name {
			return &evidenceKinds[i]
		}
	}
	return nil
}

// getEvidence returns p's evidence of the probe id, or nil (none
// recorded, or p nil).
func getEvidence[T any](p *Probes, id probeid.ID) *T {
	if p == nil {
		return nil
	}
	v, _ := p.evidence[id.Name].(*T)
	return v
}

// setEvidence sets p's evidence of the probe id; nil removes it.
func setEvidence[T any](p *Probes, id probeid.ID, v *T) {
	if v == nil {
		delete(p.evidence, id.Name)
		return
	}
	if p.evidence == nil {
		p.evidence = map[string]any{}
	}
	p.evidence[id.Name] = v
}

// probesWire is Probes' own fields as the file holds them; each kind of
// evidence is a property of its own beside them, named by its probe.
type probesWire struct {
	ElapsedS    float64            `json:"elapsed_s"`
	Costs       []ProbeCost        `json:"costs,omitempty"`
	Unavailable []ProbeUnavailable `json:"unavailable,omitempty"`
}

// MarshalJSON writes the probes as the file has them: elapsed_s, each
// probe's evidence under its name (in rank order), the costs, and the
// probes that could not run.
func (p Probes) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"elapsed_s":`)
	v, err := json.Marshal(p.ElapsedS)
	if err != nil {
		return nil, err
	}
	b.Write(v)
	for _, k := range evidenceKinds {
		ev, ok := p.evidence[k.Name]
		if !ok {
			continue
		}
		v, err := json.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("%s evidence: %w", k.Name, err)
		}
		fmt.Fprintf(&b, `,%q:`, k.Name)
		b.Write(v)
	}
	for _, part := range []struct {
		name string
		v    any
		n    int
	}{{"costs", p.Costs, len(p.Costs)}, {"unavailable", p.Unavailable, len(p.Unavailable)}} {
		if part.n == 0 {
			continue
		}
		v, err := json.Marshal(part.v)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, `,%q:`, part.name)
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the probes: each registered kind of evidence into
// its type; evidence of a kind this pgscale does not know (a newer
// probe's) is left out, as readers ignore what they do not know.
func (p *Probes) UnmarshalJSON(data []byte) error {
	var w probesWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(data, &props); err != nil {
		return err
	}
	*p = Probes{ElapsedS: w.ElapsedS, Costs: w.Costs, Unavailable: w.Unavailable}
	for name, raw := range props {
		k := evidenceOf(name)
		if k == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		v := reflect.New(k.typ)
		if err := json.Unmarshal(raw, v.Interface()); err != nil {
			return fmt.Errorf("%s evidence: %w", name, err)
		}
		if p.evidence == nil {
			p.evidence = map[string]any{}
		}
		p.evidence[name] = v.Interface()
	}
	return nil
}
