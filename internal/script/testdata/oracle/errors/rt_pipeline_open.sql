-- pgbench: -M extended
\startpipeline
SELECT 1;
