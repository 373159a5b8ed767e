package target

import "github.com/pgscale/pgscale/internal/proc"

// Process is a child process this process started and owns: a server, a
// pooler or a proxy (internal/proc's, under the name callers know).
type Process = proc.Process

// StopStep is one step of a graceful stop (internal/proc's).
type StopStep = proc.StopStep
