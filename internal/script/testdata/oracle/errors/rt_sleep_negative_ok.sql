-- pgbench: -D s=-5
\sleep :s ms
INSERT INTO out VALUES (1, 2);
