\set x sqrt(true)
