\set x random_gaussian(1, 10, 1.5)
