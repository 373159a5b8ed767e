-- Two \set random(...) and one prepared SELECT: the script interpreter's
-- share of the load generator's cost, side by side with pgbench
-- (go run ./bench/vs-pgbench -f bench/scripts/two-sets.sql).
\set aid random(1, 100000 * :scale)
\set delta random(-5000, 5000)
SELECT abalance + :delta FROM pgbench_accounts WHERE aid = :aid;
