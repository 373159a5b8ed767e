\set x least()
