\set x CASE END
