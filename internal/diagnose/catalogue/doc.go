// Package catalogue proves the diagnosis on known bottlenecks: each case
// is a real, short run against a real server with the verdict it must get
// (select-only saturating the machine at clients = cores and beyond it, a
// hot row, partitions past the fast-path slots, pg_sleep, a -R schedule
// far below capacity, many clients through one pgbouncer, and an A/B run
// whose differential diagnosis must name server CPU per transaction).
// The tests run them; golden files hold the wording of recorded runs of
// the same cases (go test -record rewrites the recordings).
package catalogue
