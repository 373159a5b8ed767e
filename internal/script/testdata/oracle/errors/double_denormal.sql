\set x 1e-310
