// Package workload holds pgscale's built-in workloads — pgbench's, as scripts
// in the pgbench language — and creates and inspects their data set.
package workload

import (
	"fmt"
	"sort"
	"strings"
)

// Builtin is a built-in script: pgbench's text, byte for byte in meaning.
type Builtin struct {
	Name        string
	Description string
	Script      string
}

// The built-in scripts, exactly as pgbench 15 defines them.
var builtins = []Builtin{
	{
		Name:        "tpcb-like",
		Description: "<builtin: TPC-B (sort of)>",
		Script: `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
	},
	{
		Name:        "simple-update",
		Description: "<builtin: simple update>",
		Script: `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
	},
	{
		Name:        "select-only",
		Description: "<builtin: select only>",
		Script: `\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`,
	},
}

// Builtins lists the built-in workloads.
func Builtins() []Builtin { return append([]Builtin(nil), builtins...) }

// FindBuiltin returns the built-in named name, or the only one whose name
// starts with it (pgbench accepts unambiguous prefixes: -b se).
func FindBuiltin(name string) (Builtin, error) {
	var found []Builtin
	for _, b := range builtins {
		if b.Name == name {
			return b, nil
		}
		if strings.HasPrefix(b.Name, name) {
			found = append(found, b)
		}
	}
	var names []string
	for _, b := range builtins {
		names = append(names, b.Name)
	}
	sort.Strings(names)
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Builtin{}, fmt.Errorf("no built-in script %q (have %s)", name, strings.Join(names, ", "))
	default:
		return Builtin{}, fmt.Errorf("ambiguous built-in script %q (have %s)", name, strings.Join(names, ", "))
	}
}
