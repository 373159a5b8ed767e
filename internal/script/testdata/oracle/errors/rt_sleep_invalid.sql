-- pgbench: -D s=foo
\sleep :s
