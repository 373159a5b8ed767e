// Package script parses and interprets pgbench-compatible benchmark scripts.
//
// The language is PostgreSQL 17's pgbench script language: SQL commands with
// :name variable substitution, and backslash meta-commands (\set with the
// full expression grammar, \sleep, \setshell, \shell, \if/\elif/\else/\endif,
// \gset, \aset, \startpipeline, \syncpipeline, \endpipeline). Semantics,
// error messages and the pseudo-random sequences follow pgbench's source.
//
// Parse turns a script's text into a Script. NewProgram joins the weighted
// scripts of one run; each Interp is one benchmark client's interpreter
// state (variables and random state), driven by the engine one command at a
// time through Meta, Params, AppendSimple and Store.
package script
