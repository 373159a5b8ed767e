-- pgbench: -M simple -t 1 -D one=1
-- \if, \elif, \else, \endif, nested, with truthiness of ints, doubles and NULL.
\if :one
INSERT INTO out VALUES ('if1', 'taken');
\else
INSERT INTO out VALUES ('if1', 'else');
\endif
\if 0
INSERT INTO out VALUES ('if2', 'if');
\elif 0.0
INSERT INTO out VALUES ('if2', 'elif1');
\elif NULL
INSERT INTO out VALUES ('if2', 'elif2');
\elif 2.5
INSERT INTO out VALUES ('if2', 'elif3');
  \if false
  INSERT INTO out VALUES ('nested', 'if');
    \if true
    INSERT INTO out VALUES ('nested2', 'never');
    \endif
  \elif :one = 1
  INSERT INTO out VALUES ('nested', 'elif');
  \else
  INSERT INTO out VALUES ('nested', 'else');
  \endif
\elif 1
INSERT INTO out VALUES ('if2', 'elif4');
\else
INSERT INTO out VALUES ('if2', 'else');
\endif
\if false
\elif false
\else
\set x 42
\endif
INSERT INTO out VALUES ('after', ':x');
\if true
\set y 1
\elif 1/0
\endif
INSERT INTO out VALUES ('elif not evaluated', ':y');
