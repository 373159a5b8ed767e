package workload

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/script"
)

// writeVerbs are the first words of SQL commands that a read-only
// transaction refuses (a hot standby's: "cannot execute UPDATE in a
// read-only transaction").
var writeVerbs = map[string]bool{
	"INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true, "TRUNCATE": true, "COPY": true,
	"CREATE": true, "DROP": true, "ALTER": true, "GRANT": true, "REVOKE": true, "COMMENT": true,
	"VACUUM": true, "ANALYZE": true, "CLUSTER": true, "REINDEX": true, "REFRESH": true, "LOCK": true,
	"NOTIFY": true, "CALL": true, "DO": true, "SECURITY": true, "IMPORT": true,
}

// Writes returns the first SQL command of the scripts that writes, as
// "tpcb-like line 4: UPDATE pgbench_accounts SET ...", and true; or false
// when every command reads (as far as its words tell: a function that
// writes, called from a SELECT, is not seen). A statement the words of
// writeVerbs open writes; so does one that names them after WITH (a
// data-modifying CTE) and a SELECT ... FOR UPDATE or FOR SHARE.
func (l *Loaded) Writes() (string, bool) {
	for _, s := range l.Scripts {
		for _, c := range s.Commands {
			if c.Kind != script.KindSQL {
				continue
			}
			for _, stmt := range strings.Split(c.Text, ";") {
				if writes(stmt) {
					return fmt.Sprintf("%s line %d: %s", s.Name, c.Line, strings.TrimSpace(c.Text)), true
				}
			}
		}
	}
	return "", false
}

func writes(stmt string) bool {
	words := strings.Fields(strings.ToUpper(strings.Trim(stmt, " \t\n\\(")))
	if len(words) == 0 {
		return false
	}
	switch first := words[0]; {
	case writeVerbs[first]:
		return true
	case first == "WITH" || first == "SELECT":
		for i, w := range words[1:] {
			w = strings.Trim(w, "(),")
			if first == "WITH" && (w == "INSERT" || w == "UPDATE" || w == "DELETE" || w == "MERGE") {
				return true
			}
			if w == "FOR" && i+2 < len(words) {
				if n := strings.Trim(words[i+2], ",;"); n == "UPDATE" || n == "SHARE" || n == "NO" || n == "KEY" {
					return true
				}
			}
		}
	}
	return false
}
