-- pgbench: -M extended
\endpipeline
