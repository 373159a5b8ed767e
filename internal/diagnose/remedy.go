package diagnose

// Remedy is an option of pgscale's that would tell what an analysis
// could not, or cover what its interval does not. The analysis names it
// by this value and speaks of no flag (issue 45): the Say its caller
// hands it words the remedy as the user gives it.
type Remedy int

// The remedies the analysis names.
const (
	// CountInstructions counts instructions under Valgrind, which other
	// processes do not move.
	CountInstructions Remedy = iota + 1
	// ReshuffleEveryRound re-creates the clusters every round, as a
	// counted run does unless told otherwise.
	ReshuffleEveryRound
	// Reshuffle re-creates the clusters every few rounds.
	Reshuffle
	// SeparateData has every target make its data with its own code.
	SeparateData
	// WholeRounds runs an A/B run's rounds whole, not in slices, with
	// the probes that sample wait events.
	WholeRounds
	// SourceBuild builds the server from source, its symbols kept.
	SourceBuild
)

// Say words a remedy as the user gives it, a phrase the analysis puts in
// its sentence ("--reshuffle"). A nil Say words none, and the sentences
// leave their remedies out.
type Say func(Remedy) string

// Of is s's words for r: "" when s is nil.
func (s Say) Of(r Remedy) string {
	if s == nil {
		return ""
	}
	return s(r)
}
