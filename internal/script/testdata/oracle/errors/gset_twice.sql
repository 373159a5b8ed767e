SELECT 1 \gset
\gset
