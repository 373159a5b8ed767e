package result

import "github.com/pgscale/pgscale/internal/probeid"

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
	// Hz is perf's sampling rate, samples per second of CPU (0: a
	// counted profile, or a file written before it was kept).
	Hz int `json:"hz,omitempty"`
	// Work is how much of the profile is the work the server's CPU per
	// transaction measures: every process but the probes' own backends.
	// Objects and Functions divide it; both are absent in files written
	// before they were kept.
	Work int64 `json:"work,omitempty"`
	// Objects are Work's samples by the shared object of the function on
	// the CPU (the executable, a library, an extension's module, the
	// kernel), most first.
	Objects []ProfileObject `json:"objects,omitempty"`
	// Functions are Work's samples by the function on the CPU (Self) and
	// on the stack (Total), with the object each is in, by Self, at most
	// maxProfileFunctions of them.
	Functions []ProfileFunc `json:"functions,omitempty"`
	// RecordedS is how long perf recorded: from when it had attached to
	// every server process to the probes' last snapshots. perf starts at
	// the window's start, and a loaded machine slows its start-up (2.9 s
	// once, under two CPU hogs), so it may cover less than the probes'
	// window (elapsed_s). 0 in files written before it was kept, and for
	// a profile of counted instructions.
	RecordedS float64 `json:"recorded_s,omitempty"`
}

// ProfileFunc is one function's share of the profile.
type ProfileFunc struct {
	Function string `json:"function"`
	Self     int64  `json:"self"`
	Total    int64  `json:"total"`
	// Object is the file the function is in (its path; the kernel's is
	// "[kernel.kallsyms]"), in Functions; absent in Top.
	Object string `json:"object,omitempty"`
}

// ProfileObject is one shared object's part of a profile's work.
type ProfileObject struct {
	// Object is its path as the profiler named it: a file, or the
	// kernel's "[kernel.kallsyms]", "[vdso]".
	Object string `json:"object"`
	Self   int64  `json:"self"`
	// Unnamed is the part of Self in functions no symbol names.
	Unnamed int64 `json:"unnamed,omitempty"`
	// Symbols is where its functions' names came from; absent for the
	// kernel's and for what is not a file.
	Symbols *Symbols `json:"symbols,omitempty"`
}

// Symbols says where an object's function names came from, and what
// would name the rest.
type Symbols struct {
	// Source is "debug file" (DebugFile's symbol table), "symbol table"
	// (the file's own), "dynamic symbols" (a stripped file with no debug
	// file: static functions have no name) or "none".
	Source    string `json:"source"`
	BuildID   string `json:"build_id,omitempty"`
	DebugFile string `json:"debug_file,omitempty"`
	// Looked are the debug files looked for, when none was found.
	Looked []string `json:"looked,omitempty"`
	// Package is the distribution's package that installed the file
	// (dpkg), and its version; absent when no package did.
	Package        string `json:"package,omitempty"`
	PackageVersion string `json:"package_version,omitempty"`
	// Error is why the file could not be read (Source "none").
	Error string `json:"error,omitempty"`
}

func init() { registerEvidence[Profile](probeid.Profile) }

// Profile is the step's profile evidence, or nil (none recorded, or p nil).
func (p *Probes) Profile() *Profile { return getEvidence[Profile](p, probeid.Profile) }

// SetProfile records the step's profile evidence (nil removes it).
func (p *Probes) SetProfile(v *Profile) { setEvidence(p, probeid.Profile, v) }
