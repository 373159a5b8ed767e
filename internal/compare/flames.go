package compare

import "github.com/pgscale/pgscale/internal/flame"

// flames reads the profiles the analysis' files name and makes their flame
// graphs, the differential ones drawing as changed the functions its
// comparisons' per-function tests named.
func (a *Analysis) flames() *flame.Set {
	files := make([]flame.File, len(a.Files))
	for i, fa := range a.Files {
		files[i] = flame.File{Path: fa.Location(), File: fa.File}
	}
	return flame.Read(files, a.namedFunctions())
}

// Location is where the file was read from: its Path, else its Name.
// Pprof files it names by a relative path are beside it.
func (in Input) Location() string {
	if in.Path != "" {
		return in.Path
	}
	return in.Name
}

// namedFunctions are the functions the per-function tests named: every
// candidate's of the comparison, and of each of a suite's cells.
func (a *Analysis) namedFunctions() []flame.Function {
	var out []flame.Function
	if c := a.Comparison; c != nil {
		run := ""
		if len(a.Files) > 0 && a.Files[0].File != nil && a.Files[0].File.AB != nil {
			run = a.Files[0].File.AB.Run
		}
		for ci := range c.Verdicts {
			out = append(out, functionsOf(c, ci, run, c.Candidates[ci])...)
		}
	}
	if s := a.Suite; s != nil {
		for ci, cand := range s.Candidates {
			for _, sc := range s.Cells {
				out = append(out, functionsOf(sc.Comparison, ci, sc.Run(), cand)...)
			}
		}
	}
	return out
}

// functionsOf are the functions candidate ci's per-function tests named in
// comparison c of A/B run run, as the candidate cand's.
func functionsOf(c *Comparison, ci int, run, cand string) []flame.Function {
	if c == nil || ci >= len(c.Why) {
		return nil
	}
	var out []flame.Function
	for _, f := range c.Why[ci].ChangedFunctions() {
		out = append(out, flame.Function{Run: run, Candidate: cand, Clients: f.Clients, Pooler: f.Process == "pooler",
			Symbol: f.Function, Object: f.Object})
	}
	return out
}
