// Package disturb runs disturbances beside a step's workload: a built-in or
// a script in pgbench's language, looped by sessions of its own during a
// window of every step (docs/disturbances.md).
package disturb
