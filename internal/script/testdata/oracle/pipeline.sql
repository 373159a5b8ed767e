-- pgbench: -M extended -t 2
-- Pipelines, with \syncpipeline (PostgreSQL 17; pgbench 15 lacks it, so this
-- script stays within what pgbench 15 runs).
\set x 3
\startpipeline
INSERT INTO out VALUES ('p1', :x);
\set x :x + 1
INSERT INTO out VALUES ('p2', :x);
\endpipeline
INSERT INTO out VALUES ('after', :x);
