\set x 1 IS 2
