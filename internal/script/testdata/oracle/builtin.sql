-- pgbench: -M simple -t 3 -s 7 --random-seed=5432
-- Built-in variables and the random functions, three transactions in a row,
-- one client, fixed seed: each value must match pgbench's own sequence.
INSERT INTO out VALUES ('client_id', ':client_id'), ('scale', ':scale'), ('random_seed', ':random_seed'), ('default_seed', ':default_seed');
\set u random(1, 100000 * :scale)
\set v random(-5000, 5000)
\set w random(0, 1)
\set big random(-4611686018427387903, 4611686018427387903)
INSERT INTO out VALUES ('random', ':u'), ('random2', ':v'), ('random3', ':w'), ('randombig', ':big');
\set e random_exponential(1, 1000, 2.5)
\set e2 random_exponential(1, 10, 0.001)
INSERT INTO out VALUES ('exponential', ':e'), ('exponential2', ':e2');
\set g random_gaussian(1, 1000, 2.5)
\set g2 random_gaussian(-10, 10, 10)
INSERT INTO out VALUES ('gaussian', ':g'), ('gaussian2', ':g2');
\set z random_zipfian(1, 1000, 1.5)
\set z2 random_zipfian(1, 100, 1.001)
\set z3 random_zipfian(1, 1000000, 900)
INSERT INTO out VALUES ('zipfian', ':z'), ('zipfian2', ':z2'), ('zipfian3', ':z3');
\set h hash(:u)
\set h2 hash_fnv1a(:u)
\set p permute(:u, 1000)
\set same random(5, 5)
INSERT INTO out VALUES ('hash default seed', ':h'), ('fnv default seed', ':h2'), ('permute default seed', ':p'), ('random(5,5)', ':same');
\set n random(NULL, 5)
\set after random(1, 1000000)
INSERT INTO out VALUES ('random null', ':n'), ('after', ':after');
