\set x NOT 1
