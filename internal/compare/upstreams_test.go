package compare_test

import (
	"math"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/result"
)

// Where a target's statements went is added up per client count over its
// complete rounds, from the upstreams evidence, with each server's
// smallest and largest share in one round; a step cut short is left out,
// and a target with one server has no split.
func TestUpstreamShares(t *testing.T) {
	step := func(primary, replica int64, complete bool) result.Step {
		p := &result.Probes{}
		total := float64(primary + replica)
		p.SetUpstreams(&result.Upstreams{Servers: []result.UpstreamStat{
			{Name: "base.s1", Role: "primary", Statements: &primary, Share: float64(primary) / total},
			{Name: "base.s1-replica1", Role: "replica", Statements: &replica, Share: float64(replica) / total},
		}})
		return result.Step{Clients: 4, Complete: complete, Probes: p}
	}
	f := &result.File{Steps: []result.Step{step(300, 700, true), step(500, 500, true), step(1000, 0, false)}}
	fa := compare.AnalyzeFile(compare.Input{Name: "base", File: f})
	if len(fa.Points) != 1 {
		t.Fatalf("points %+v", fa.Points)
	}
	us := fa.Points[0].Upstreams
	if len(us) != 2 || us[0].Role != "primary" || us[0].Count != 800 || math.Abs(us[0].Share-0.4) > 1e-9 ||
		math.Abs(us[0].Lo-0.3) > 1e-9 || math.Abs(us[0].Hi-0.5) > 1e-9 || us[1].Count != 1200 || math.Abs(us[1].Share-0.6) > 1e-9 {
		t.Errorf("upstreams %+v", us)
	}
	one := &result.File{Steps: []result.Step{{Clients: 4, Complete: true}}}
	if fa := compare.AnalyzeFile(compare.Input{Name: "base", File: one}); fa.Points[0].Upstreams != nil {
		t.Errorf("one server: %+v", fa.Points[0].Upstreams)
	}
}
