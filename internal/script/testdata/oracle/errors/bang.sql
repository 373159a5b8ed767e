\set x !1
