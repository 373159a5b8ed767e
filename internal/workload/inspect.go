package workload

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
)

// Tables are pgbench's tables.
var Tables = []string{"pgbench_accounts", "pgbench_branches", "pgbench_history", "pgbench_tellers"}

// Data describes the pgbench data set found in a database.
type Data struct {
	Missing    []string // pgbench tables that do not exist
	Scale      int      // rows in pgbench_branches, as pgbench reads it
	Partitions int      // partitions of pgbench_accounts
	// PartitionMethod is "range" or "hash" when pgbench_accounts is
	// partitioned, "" when not.
	PartitionMethod string
}

// Complete reports whether every pgbench table exists.
func (d Data) Complete() bool { return len(d.Missing) == 0 }

// Inspect looks for pgbench's tables and reads the scale the way pgbench
// does (the number of branches).
func Inspect(ctx context.Context, conn *pgconn.PgConn) (Data, error) {
	var d Data
	for _, t := range Tables {
		v, err := queryOne(ctx, conn, "SELECT to_regclass('"+t+"') IS NOT NULL")
		if err != nil {
			return d, err
		}
		if v != "t" {
			d.Missing = append(d.Missing, t)
		}
	}
	if !d.Complete() {
		return d, nil
	}
	v, err := queryOne(ctx, conn, "SELECT count(*) FROM pgbench_branches")
	if err != nil {
		return d, err
	}
	d.Scale, _ = strconv.Atoi(v)
	v, err = queryOne(ctx, conn, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'pgbench_accounts'::regclass")
	if err != nil {
		return d, err
	}
	d.Partitions, _ = strconv.Atoi(v)
	v, err = queryOne(ctx, conn, "SELECT coalesce((SELECT partstrat::text FROM pg_partitioned_table WHERE partrelid = 'pgbench_accounts'::regclass), '')")
	if err != nil {
		return d, err
	}
	d.PartitionMethod = map[string]string{"r": "range", "h": "hash"}[v]
	return d, nil
}

func queryOne(ctx context.Context, conn *pgconn.PgConn, sql string) (string, error) {
	res := conn.ExecParams(ctx, sql, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return "", fmt.Errorf("%s: %w", sql, res.Err)
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) < 1 {
		return "", fmt.Errorf("%s: expected one row, got %d", sql, len(res.Rows))
	}
	return string(res.Rows[0][0]), nil
}

// biggestTableSQL finds the biggest ordinary, partitioned or materialized
// table outside the system schemas, counting a partitioned table as the
// sum of its partitions and indexes (its partitions are not candidates).
const biggestTableSQL = `SELECT format('%I.%I', n.nspname, c.relname)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'm') AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_(toast|temp_)'
ORDER BY CASE WHEN c.relkind = 'p'
    THEN (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree(c.oid) WHERE isleaf)
    ELSE pg_total_relation_size(c.oid) END DESC NULLS LAST, 1
LIMIT 1`

// BiggestTable returns the schema-qualified, quoted name of the biggest
// user table in conn's database (the workload's biggest table, when the
// database holds only the workload).
func BiggestTable(ctx context.Context, conn *pgconn.PgConn) (string, error) {
	res := conn.ExecParams(ctx, biggestTableSQL, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return "", fmt.Errorf("find the biggest table: %w", res.Err)
	}
	if len(res.Rows) == 0 {
		return "", fmt.Errorf("the database has no table; name one with NAME=TABLE")
	}
	return string(res.Rows[0][0]), nil
}
