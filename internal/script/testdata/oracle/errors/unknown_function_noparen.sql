\set x foo
