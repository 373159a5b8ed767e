\set
