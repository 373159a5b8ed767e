-- pgbench: -M extended
\startpipeline
SELECT 1 \gset
\endpipeline
