-- pgbench: -D v=abc
\set x :v + 1
