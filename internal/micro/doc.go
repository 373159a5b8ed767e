// Package micro reads what a project's own benchmark programs print and
// judges their benchmarks at two or more builds with the statistics of
// the macro measures: each benchmark's change ± uncertainty over
// interleaved rounds, Holm's correction over the benchmarks, the three
// outcomes against bounds named by benchmark or pattern, and summaries
// of groups of benchmarks. It runs nothing: the schedule
// (internal/schedule/microbench) records a Run, Analyze makes the
// Analysis every format lays out.
//
// A format of benchmark output is one file (format_NAME.go) and one line
// in formats (format.go).
package micro
