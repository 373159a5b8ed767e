// Package stats turns measured values into the numbers pgscale reports and
// the verdicts a CI job acts on, as docs/statistics.md describes. It is pure
// computation: it knows nothing of PostgreSQL or of result files.
package stats
