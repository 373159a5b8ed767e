\set x 1 AND true
