// Package script parses and interprets PostgreSQL 17's pgbench script
// language, with pgbench's semantics, error messages and pseudo-random
// sequences. Parse makes a Script, NewProgram joins a run's weighted
// scripts, and each Interp is one client's interpreter state, which the
// engine drives one command at a time.
package script
