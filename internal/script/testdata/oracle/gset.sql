-- pgbench: -M simple -t 1
-- \gset and \aset (need a server). Simple mode: \; is refused in extended mode.
SELECT 1 AS one, 'two' AS two, NULL AS three \gset
INSERT INTO out VALUES ('one', ':one'), ('two', ':two'), ('three', ':three');
SELECT 5 AS x \gset p_
INSERT INTO out VALUES ('p_x', ':p_x');
SELECT 1 AS a \; SELECT 2 AS b \; SELECT 3 AS c \gset
INSERT INTO out VALUES ('c', ':c');
SELECT 10 AS a1 \; SELECT 20 AS b1 WHERE false \; SELECT 30 AS c1 \aset
INSERT INTO out VALUES ('a1', ':a1'), ('c1', ':c1');
SELECT i AS last FROM generate_series(1, 3) i \aset q_
INSERT INTO out VALUES ('q_last', ':q_last');
\set s :p_x * 2
INSERT INTO out VALUES ('s', ':s');
