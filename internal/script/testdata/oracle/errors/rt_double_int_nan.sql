\set x int(sqrt(-1))
