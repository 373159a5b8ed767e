\set x random_exponential(1, 10, 0)
