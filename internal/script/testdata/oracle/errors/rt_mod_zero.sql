\set x 1 % 0
