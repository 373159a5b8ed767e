\set x hash(1, 2, 3)
