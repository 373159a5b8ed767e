package target

import (
	"strings"
	"testing"
)

// A balancing pgbouncer's database is a host list of the server and its
// replicas on their one port, with load_balance_hosts written in
// [databases] for the versions that know it (1.24 and later) and not for
// those that would refuse it; servers on ports of their own cannot be one
// host list.
func TestPgBouncerDatabase(t *testing.T) {
	ups := []Upstream{{Host: "/tmp/p", Port: 5432, User: "postgres"}, {Host: "/tmp/r1", Port: 5432, User: "postgres", Role: "replica"}}
	for version, want := range map[string]string{
		"1.18.0": ` host={{"/tmp/p,/tmp/r1"}} port={{upstream.port}}{{with upstream.user}} user={{connquote .}}{{end}}{{with upstream.password}} password={{connquote .}}{{end}}`,
		"1.25.1": ` host={{"/tmp/p,/tmp/r1"}} port={{upstream.port}}{{with upstream.user}} user={{connquote .}}{{end}}{{with upstream.password}} password={{connquote .}}{{end}} load_balance_hosts=round-robin`,
	} {
		if got, err := pgbouncerDatabase(ups, BalanceRoundRobin, version, Words{}); err != nil || got != want {
			t.Errorf("%s: %s, %v\nwant %s", version, got, err, want)
		}
	}
	if got, _ := pgbouncerDatabase(ups[:1], BalanceRoundRobin, "1.25.1", Words{}); strings.Contains(got, "load_balance_hosts") {
		t.Errorf("one server balanced: %s", got)
	}
	if got, _ := pgbouncerDatabase(ups, "", "1.25.1", Words{}); strings.Contains(got, "/tmp/r1") {
		t.Errorf("not balancing, yet the replica is listed: %s", got)
	}
	tcp := []Upstream{{Host: "127.0.0.1", Port: 5432}, {Host: "127.0.0.1", Port: 5433}}
	if _, err := pgbouncerDatabase(tcp, BalanceRoundRobin, "1.18.0", Words{}); err == nil || !strings.Contains(err.Error(), "one port for all") {
		t.Errorf("replicas on other ports: %v", err)
	}
}
