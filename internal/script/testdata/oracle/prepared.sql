-- pgbench: -M prepared -t 1 -D s=abc
-- Prepared mode: the same as extended mode.
\set d 1.0 / 3
\set n NULL
\set b 1 = 1
INSERT INTO out VALUES ('undefined', coalesce(:nosuch, '<null>')), ('double', :d), ('null value', :n), ('bool', :b);
INSERT INTO out VALUES ('string', :s), ('cast', :s::text || 'x');
