package target

import (
	"os"
	"strings"
)

// libpqVars are the libpq environment variables pgscale reads to find a
// server (EnvPointsAtServer); the server programs read some of them too
// (postgres and initdb take their default port from PGPORT).
var libpqVars = []string{"PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGSERVICE", "PGUSER", "PGPASSWORD", "PGOPTIONS",
	"PGSSLMODE", "PGCONNECT_TIMEOUT", "PGAPPNAME", "PGTARGETSESSIONATTRS", "PGDATA"}

// childEnv is this process's environment for the server programs it runs,
// without the libpq variables that are set but empty: pgscale (like pgx)
// treats an empty one as unset, and so must what it starts — postgres
// refuses PGPORT="" as a port.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); v == "" && isLibpqVar(k) {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func isLibpqVar(k string) bool {
	for _, v := range libpqVars {
		if k == v {
			return true
		}
	}
	return false
}
