\set x random_zipfian(1, 10, 1.0)
