\set x abs
