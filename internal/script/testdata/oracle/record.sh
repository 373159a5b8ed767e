#!/usr/bin/env bash
# Records pgbench's own results for the oracle scripts in this directory.
#
# For NAME.sql, runs `pgbench -n ARGS -f NAME.sql` (ARGS from the script's
# "-- pgbench:" line) against table out(seq, k, v) and writes NAME.out: the
# command line, then one "k<TAB>v" line per inserted row, in insertion order
# (sorted when several clients run).
# For errors/NAME.sql, writes errors/NAME.err: the command line, pgbench's
# "error:" lines and its exit status.
#
# Usage: PGHOST=/socket/dir PGPORT=5432 PGUSER=postgres ./record.sh
# PGBENCH and PSQL default to the PostgreSQL 15 binaries.
set -euo pipefail
cd "$(dirname "$0")"
PGBENCH=${PGBENCH:-/usr/lib/postgresql/15/bin/pgbench}
PSQL=${PSQL:-/usr/lib/postgresql/15/bin/psql}
export PGDATABASE=${PGDATABASE:-postgres}
version=$("$PGBENCH" --version)

args_of() { sed -n 's/^-- pgbench: //p' "$1" | head -1; }

reset_out() {
	"$PSQL" -qX -c 'DROP TABLE IF EXISTS out; CREATE TABLE out (k text, v text, seq bigserial)' >/dev/null
}

for f in *.sql; do
	args=$(args_of "$f")
	reset_out
	status=0
	eval "\"$PGBENCH\" -n $args -f \"$f\"" >/dev/null 2>"${f%.sql}.stderr" || status=$?
	{
		echo "# $version: pgbench -n $args -f $f (exit $status)"
		order=seq
		case " $args " in *" -c "*) order="k, v" ;; esac # several clients: no set order
		"$PSQL" -qXAt -F $'\t' -c "SELECT k, v FROM out ORDER BY $order"
	} >"${f%.sql}.out"
	grep -v '^pgbench: error: Run was aborted' "${f%.sql}.stderr" | grep 'error' >>"${f%.sql}.out" || true
	rm -f "${f%.sql}.stderr"
done

for f in errors/*.sql; do
	args=$(args_of "$f")
	reset_out
	status=0
	out=$(eval "\"$PGBENCH\" -n -t 1 $args -f \"$f\"" 2>&1 >/dev/null) || status=$?
	{
		echo "# $version: pgbench -n -t 1 $args -f $f (exit $status)"
		printf '%s\n' "$out" | grep -v 'Run was aborted' || true
	} >"${f%.sql}.err"
done
