package build

import (
	"fmt"
	"strings"
	"time"
)

// Phases of a build, as Event.Phase and Error.Phase name them. An
// extension's phase is "ext NAME".
const (
	PhaseWait      = "wait"      // another process is making the same build
	PhaseCached    = "cached"    // the build was found in the cache
	PhaseExport    = "export"    // the source tree is copied out of the checkout
	PhasePatch     = "patch"     // the patches are applied to the copy
	PhaseConfigure = "configure" // configure, or meson setup
	PhaseMake      = "make"      // make, or ninja
	PhaseInstall   = "install"   // make install, or meson install
	PhaseContrib   = "contrib"   // the contrib modules are built and installed
	PhaseBuild     = "build"     // a Command's build command
	PhaseCheck     = "check"     // the installed server says its version
	PhaseCache     = "cache"     // the build is moved into the cache
)

// Event is one step of a build as it happens: a phase starting or ending.
type Event struct {
	// Name is the build's label (the spec's Name, else its source).
	Name string
	// Key is the build's cache key.
	Key string
	// Phase is one of the Phase constants or "ext NAME".
	Phase string
	// Done is false when the phase starts and true when it has ended.
	Done bool
	// Elapsed is, when Done, how long the phase took.
	Elapsed time.Duration
}

// Error is a build that failed: which build, in which phase, where its log
// is and the log's last lines. Nothing of it was cached.
type Error struct {
	Name  string
	Key   string
	Phase string
	// Log is the failed build's log, kept under the cache's failed/
	// directory (with the failure remembered beside it: Failure) until the
	// key builds or a prune.
	Log string
	// Tail is the failed phase's last lines of output (about 20), led by
	// its first compiler error when that came earlier.
	Tail []string
	Err  error
}

// Error returns one line: the build, the phase, the cause and the log's path.
func (e *Error) Error() string {
	s := fmt.Sprintf("build %s: %s failed: %v", e.Name, e.Phase, e.Err)
	if e.Log != "" {
		s += " (log: " + e.Log + ")"
	}
	return s
}

// Unwrap returns the cause: a command's exit error, or the context's error
// when the build was interrupted.
func (e *Error) Unwrap() error { return e.Err }

// tailLines returns the last n lines of out, preceded by the first line
// that looks like a compiler or make error when it is not among them.
func tailLines(out string, n int) []string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	start := max(len(lines)-n, 0)
	tail := lines[start:]
	for i, l := range lines[:start] {
		if strings.Contains(l, "error:") || strings.Contains(l, "Error ") {
			tail = append([]string{lines[i], "..."}, tail...)
			break
		}
	}
	return tail
}
