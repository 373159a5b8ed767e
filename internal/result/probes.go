package result

// Probes is the server-side evidence gathered beside a step: process
// accounting, wait events, locks, statements, and the diagnosis drawn from
// them.
type Probes struct{}
