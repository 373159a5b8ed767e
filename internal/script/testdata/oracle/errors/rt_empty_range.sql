\set x random(5, 1)
