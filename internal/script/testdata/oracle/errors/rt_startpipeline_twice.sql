-- pgbench: -M extended
\startpipeline
\startpipeline
\endpipeline
