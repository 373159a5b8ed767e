package probe

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/result"
)

// A replica whose pg_stat_statements could not be read at the step's end
// has no count of statements, not a count of zero (it was taken as zero:
// "replica1 got 0 statements, share 0.00" though pgpool balanced the reads
// over both), and the split falls back to the servers' transactions.
func TestUpstreamsFailedReadIsNoCount(t *testing.T) {
	p := &upstreamsProbe{
		ups:        []Upstream{{Name: "primary", Role: "primary", Primary: -1, Conn: &pgconn.Config{}}, {Name: "replica1", Role: "replica", Primary: 0, Conn: &pgconn.Config{}}},
		statements: []bool{true, true},
		first:      []upSample{{ok: true, xacts: 10, statements: 100}, {ok: true, xacts: 10, statements: 100}},
		last:       []upSample{{ok: true, xacts: 1013, statements: 1100}, {ok: true, xacts: 3013, statements: -1}},
	}
	var out result.Probes
	if err := p.report(t.Context(), nil, &out); err != nil {
		t.Fatal(err)
	}
	u := out.Upstreams()
	if u == nil || len(u.Servers) != 2 {
		t.Fatalf("upstreams %+v", u)
	}
	primary, replica := u.Servers[0], u.Servers[1]
	if primary.Statements == nil || *primary.Statements != 1000 || replica.Statements != nil {
		t.Errorf("statements %v and %v; want 1000 and no count", primary.Statements, replica.Statements)
	}
	if primary.Share != 0.25 || replica.Share != 0.75 {
		t.Errorf("shares %.2f and %.2f; want 0.25 and 0.75, by transactions", primary.Share, replica.Share)
	}
}
