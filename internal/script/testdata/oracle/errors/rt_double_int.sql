\set x int(1e30)
