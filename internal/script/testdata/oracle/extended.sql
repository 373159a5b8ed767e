-- pgbench: -M extended -t 1 -D s=abc
-- Extended mode: every :name becomes a parameter, even inside quotes; an
-- undefined variable is sent as NULL; a NULL value is sent as the text NULL.
\set d 1.0 / 3
\set n NULL
\set b 1 = 1
INSERT INTO out VALUES ('undefined', coalesce(:nosuch, '<null>')), ('double', :d), ('null value', :n), ('bool', :b);
INSERT INTO out VALUES ('string', :s), ('cast', :s::text || 'x');
