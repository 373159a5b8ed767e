-- pgbench: -M simple -t 1 -D name=world
-- Simple-mode substitution: casts, quotes, undefined variables, comments,
-- \: and :{?x}, multi-line commands, \; compound statements.
\set n 5
INSERT INTO out VALUES ('cast', ':name'::text), ('cast2', :n::text);
INSERT INTO out VALUES ('quoted', 'hello :name');
INSERT INTO out VALUES ('undefined', ':nosuch');
INSERT INTO out VALUES ('double colon', '::name');
INSERT INTO out VALUES ('colon digit', ':1abc');
INSERT INTO out VALUES ('test var', ':{?name}');
INSERT INTO out VALUES ('backslash colon', '\:name');
INSERT INTO out
  -- a comment with :name
  VALUES ('multi', /* :name */ ':name');
INSERT INTO out VALUES ('compound1', ':name') \; INSERT INTO out VALUES ('compound2', ':name');
INSERT INTO out VALUES ('bs colon', '' || \:n), ('test var2', :{?name}::text);
INSERT INTO out VALUES ('dollar', $$:name$$);
INSERT INTO out VALUES ('E', E'\':name');
\set n 5
INSERT INTO out VALUES ('adjacent', ':n:n'), ('in ident', ':n_x'), ('concat', ':n' || 'x');
