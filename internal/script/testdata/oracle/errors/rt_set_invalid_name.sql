\set 1x 5
