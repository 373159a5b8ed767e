#!/bin/bash
# syscalls.sh: the system calls of a select-only backend, natively (strace)
# and under Valgrind's callgrind (its per-function sysCount), with and
# without pg_stat_statements' timing (compute_query_id=on|off): the
# evidence of docs/counting-instructions.md, "What syscalls/txn counts".
#
#   sudo bench/counted/syscalls.sh [TRANSACTIONS]
#
# Needs PostgreSQL 15's server binaries, pgbench, strace, valgrind and
# callgrind_annotate; runs a cluster of its own in a temporary directory as
# the postgres OS user (as root) or as the caller, on port 55432.
set -euo pipefail
N=${1:-2000}
B=${PGBIN:-/usr/lib/postgresql/15/bin}
W=$(mktemp -d /tmp/pgscale-syscalls-XXXXXX)
chmod 755 "$W"
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -c "$*"; else bash -c "$*"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$W"
trap 'as_pg "$B/pg_ctl -D $W/data -m immediate stop" >/dev/null 2>&1 || true; rm -rf "$W"' EXIT
as_pg "$B/initdb -D $W/data -A trust" >/dev/null
cat >> "$W/data/postgresql.conf" <<CONF
port=55432
unix_socket_directories='$W'
listen_addresses=''
shared_preload_libraries='pg_stat_statements'
autovacuum=off
jit=off
track_io_timing=off
CONF
bench="pgbench -h $W -p 55432 -S -M prepared -c 1 -t $N postgres"
as_pg "$B/pg_ctl -D $W/data -l $W/log -w start" >/dev/null
as_pg "pgbench -h $W -p 55432 -i -s 1 postgres" >/dev/null 2>&1
as_pg "$bench" >/dev/null 2>&1 # warm the page cache and shared buffers
for q in on off; do
	as_pg "$B/pg_ctl -D $W/data -l $W/log -w -o '-c compute_query_id=$q' restart" >/dev/null
	pm=$(head -1 "$W/data/postmaster.pid")
	rm -f "$W"/strace.*
	strace -ff -o "$W/strace" -p "$pm" 2>/dev/null &
	st=$!
	sleep 1
	as_pg "$bench" >/dev/null 2>&1
	sleep 1
	kill "$st"; wait "$st" 2>/dev/null || true
	f=$(ls -S "$W"/strace.* | head -1) # the backend: the busiest process
	echo "natively, compute_query_id=$q, $N transactions: system calls of the backend (strace)"
	sed -E 's/^([a-z_0-9]+)\(.*/\1/' "$f" | grep -E '^[a-z_0-9]+$' | sort | uniq -c | sort -rn | head -6
done
as_pg "$B/pg_ctl -D $W/data -m fast stop" >/dev/null
for q in on off; do
	as_pg "setarch $(uname -m) -R valgrind --tool=callgrind --instr-atstart=yes --trace-children=yes --dump-line=no --collect-systime=yes --callgrind-out-file=$W/cg.$q.%p $B/postgres -D $W/data -c compute_query_id=$q" >"$W/vg.$q.log" 2>&1 &
	for _ in $(seq 120); do pg_isready -q -h "$W" -p 55432 && break; sleep 1; done
	as_pg "$bench" >/dev/null 2>&1
	as_pg "$B/pg_ctl -D $W/data -m fast -w stop" >/dev/null
	sleep 2
	f=$(for x in "$W"/cg.$q.*; do echo "$(awk '/^totals:/ {print $2}' "$x") $x"; done | sort -n | tail -1 | cut -d' ' -f2) # the backend: most instructions
	echo "under Valgrind, compute_query_id=$q, $N transactions (the backend's whole life): system calls by function (callgrind)"
	callgrind_annotate --show=sysCount --sort=sysCount --inclusive=no "$f" 2>/dev/null | grep -A8 "file:function" | tail -n +3
done
