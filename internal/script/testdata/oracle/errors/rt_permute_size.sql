\set x permute(1, 0)
