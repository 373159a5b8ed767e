-- pgbench: -M simple -t 1 -c 3 -j 3 --random-seed=1234
-- Three clients, one thread each: each client's random state and the shared
-- default seed come from one base sequence in pgbench's order.
INSERT INTO out VALUES ('default_seed', ':default_seed');
\set r random(1, 1000000000)
INSERT INTO out VALUES ('client :client_id', ':r');
