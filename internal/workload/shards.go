package workload

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pgscale/pgscale/internal/script"
)

// Shard is how a sharding pooler routes a table's rows: by the value of
// one of its columns (PgDog's sharded_tables, PgCat's sharding key).
type Shard struct{ Table, Column string }

// CrossShard returns the first transaction of the scripts whose writes
// a pooler sharding as shards says cannot keep to one shard, as "tpcb-like
// line 6: UPDATE pgbench_accounts ... (by aid = :aid), and line 8: UPDATE
// pgbench_tellers ... (not sharded: every shard)" (its first write and the
// first that routes otherwise), and true; or false when
// every transaction writes at most one shard's rows. A transaction is what
// lies between BEGIN and END (COMMIT, ROLLBACK), or a command outside one. A write routes by its table's column when the statement
// pins it to one value (WHERE col = EXPR, an INSERT's VALUES for it), to
// every shard otherwise (a table the pooler does not shard, or a write
// that does not name the key); two writes of one transaction that route
// otherwise than by one and the same EXPR cross shards. As far as the
// words tell: a function that writes, called from a SELECT, is not seen.
func (l *Loaded) CrossShard(shards []Shard) (string, bool) {
	by := map[string]string{}
	for _, s := range shards {
		by[tableName(s.Table)] = strings.ToLower(s.Column)
	}
	for _, s := range l.Scripts {
		var txn []shardWrite // the writes of the transaction open
		in := false
		for _, c := range s.Commands {
			if c.Kind != script.KindSQL {
				continue
			}
			for _, stmt := range strings.Split(c.Text, ";") {
				words := strings.Fields(strings.ToUpper(stmt))
				switch {
				case len(words) == 0:
					continue
				case words[0] == "BEGIN" || words[0] == "START":
					in = true
					continue
				case words[0] == "END" || words[0] == "COMMIT" || words[0] == "ROLLBACK" || words[0] == "ABORT":
					in = false
					if d, ok := crosses(s.Name, txn); ok {
						return d, true
					}
					txn = nil
				case writes(stmt):
					txn = append(txn, routeOf(stmt, by, c.Line))
				}
			}
			// Outside BEGIN, a command is a transaction of its own (the
			// statements of a compound one together).
			if !in {
				if d, ok := crosses(s.Name, txn); ok {
					return d, true
				}
				txn = nil
			}
		}
		if d, ok := crosses(s.Name, txn); ok {
			return d, true
		}
	}
	return "", false
}

// crosses says the writes of one transaction of script name, when they
// do not all route by one and the same key value.
func crosses(name string, txn []shardWrite) (string, bool) {
	if len(txn) < 2 {
		return "", false
	}
	for i, w := range txn {
		if w.key == "" || w.key != txn[0].key {
			if i == 0 {
				w = txn[1] // the first write alone reaches every shard: said with the next
			}
			return fmt.Sprintf("%s line %d: %s, and line %d: %s", name, txn[0].line, txn[0].describe(), w.line, w.describe()), true
		}
	}
	return "", false
}

// shardWrite is one write of a transaction: where it is, what it writes
// and by which key value it routes ("" for every shard).
type shardWrite struct {
	line              int
	text, head, table string
	column, key       string
	sharded           bool
}

// describe says the write and how it routes.
func (w shardWrite) describe() string {
	text := w.head + " ..."
	if w.head == "" {
		text = w.text
		if len(text) > 40 {
			text = strings.TrimSpace(text[:37]) + "..."
		}
	}
	switch {
	case w.key != "":
		return fmt.Sprintf("%s (by %s = %s)", text, w.column, w.key)
	case w.sharded:
		return fmt.Sprintf("%s (not by %s: every shard)", text, w.column)
	case w.table == "":
		return text + " (every shard)"
	}
	return text + " (not sharded: every shard)"
}

var (
	writeTable = regexp.MustCompile(`(?is)^\s*(?:UPDATE\s+(?:ONLY\s+)?|DELETE\s+FROM\s+(?:ONLY\s+)?|INSERT\s+INTO\s+|MERGE\s+INTO\s+)([A-Za-z_."][A-Za-z0-9_."$]*)`)
	insertCols = regexp.MustCompile(`(?is)^\s*INSERT\s+INTO\s+[^\s(]+\s*\(([^)]*)\)\s*VALUES\s*\((.*)\)\s*$`)
)

// routeOf finds how the write stmt routes under by (table: column).
func routeOf(stmt string, by map[string]string, line int) shardWrite {
	w := shardWrite{line: line, text: strings.Join(strings.Fields(stmt), " ")}
	m := writeTable.FindStringSubmatch(stmt)
	if m == nil {
		return w
	}
	w.head, w.table = strings.Join(strings.Fields(m[0]), " "), tableName(m[1])
	col, ok := by[w.table]
	if !ok {
		return w
	}
	w.sharded, w.column = true, col
	if m := insertCols.FindStringSubmatch(stmt); m != nil {
		cols, vals := splitTop(m[1]), splitTop(m[2])
		for i, c := range cols {
			if strings.EqualFold(strings.Trim(c, `" `), col) && i < len(vals) {
				w.key = strings.TrimSpace(vals[i])
			}
		}
		return w
	}
	upper := strings.ToUpper(stmt)
	where := strings.LastIndex(upper, " WHERE ")
	if where < 0 {
		return w
	}
	eq := regexp.MustCompile(`(?i)(?:^|[\s(.])"?` + regexp.QuoteMeta(col) + `"?\s*=\s*([^\s)]+)`)
	if k := eq.FindStringSubmatch(stmt[where:]); k != nil {
		w.key = k[1]
	}
	return w
}

// tableName is a table's name without its schema and quotes, lower-case.
func tableName(s string) string {
	s = strings.ToLower(strings.ReplaceAll(s, `"`, ""))
	if i := strings.LastIndex(s, "."); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// splitTop splits a list at its commas outside parentheses and quotes.
func splitTop(s string) []string {
	var out []string
	depth, quote, start := 0, false, 0
	for i, r := range s {
		switch {
		case r == '\'':
			quote = !quote
		case quote:
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}
