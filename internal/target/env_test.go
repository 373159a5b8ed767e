package target_test

import (
	"context"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/target"
	"github.com/pgscale/pgscale/internal/testenv"
)

// A libpq variable set but empty is unset for pgscale and for the server
// programs it starts: PGPORT="" neither points at a server nor stops an
// ephemeral cluster from starting (postgres refuses "" as a port).
func TestEmptyLibpqVariableIsUnset(t *testing.T) {
	testenv.Slow(t)
	for _, v := range []string{"PGHOST", "PGHOSTADDR", "PGDATABASE", "PGSERVICE"} {
		t.Setenv(v, "")
	}
	t.Setenv("PGPORT", "")
	if target.EnvPointsAtServer() {
		t.Errorf("PGPORT=\"\" points at a server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := target.Start(ctx, target.Options{})
	if c != nil {
		defer c.Stop()
	}
	if err != nil {
		t.Fatalf("with PGPORT=\"\": %v", err)
	}
	if got := query(t, c.ConnString("postgres"), "SELECT 1"); got != "1" {
		t.Errorf("SELECT 1 = %q", got)
	}
}
