package result

// Profile is a CPU profile of the server's processes during the step.
type Profile struct {
	// File is the pprof file: relative to the result file's directory
	// when it is inside that directory, else an absolute path. (Files
	// written before this was so hold the path relative to the directory
	// pgscale ran in.)
	File    string        `json:"file"`
	Samples int64         `json:"samples"`
	Top     []ProfileFunc `json:"top,omitempty"` // by self samples, descending
	// Unit is what Samples, Self and Total count: empty for perf's
	// samples, "instructions" for a profile of the instructions counted
	// under Valgrind.
	Unit string `json:"unit,omitempty"`
}

// ProfileFunc is one function's share of the profile.
type ProfileFunc struct {
	Function string `json:"function"`
	Self     int64  `json:"self"`
	Total    int64  `json:"total"`
}

func init() { registerEvidence[Profile]("profile", 60) }

// Profile is the step's profile evidence, or nil (none recorded, or p nil).
func (p *Probes) Profile() *Profile { return getEvidence[Profile](p, "profile") }

// SetProfile records the step's profile evidence (nil removes it).
func (p *Probes) SetProfile(v *Profile) { setEvidence(p, "profile", v) }
