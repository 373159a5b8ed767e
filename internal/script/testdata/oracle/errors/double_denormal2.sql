\set x 5e-324
