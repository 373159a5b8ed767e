-- The second script of choose.sql.
INSERT INTO out VALUES ('script', 'b');
