\set x int(true)
