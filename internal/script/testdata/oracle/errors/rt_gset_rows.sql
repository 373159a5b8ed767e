SELECT 1 AS x FROM generate_series(1, 2) \gset
