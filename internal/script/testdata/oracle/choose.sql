-- pgbench: -M simple -t 40 --random-seed=77 -f choose_b.sql@3
-- Weighted script choice: choose_b.sql (script 0, weight 3) and this one
-- (script 1, weight 1); one client, so pgbench's per-thread choice state is
-- the client's.
INSERT INTO out VALUES ('script', 'a');
