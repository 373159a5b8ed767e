package connerr_test

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/connerr"
)

// A refused connection's fix is made in the connection string: the error
// says so in those words, and In names where the string came from.
func TestRemedyIn(t *testing.T) {
	cfg := &pgconn.Config{Host: "127.0.0.1", Port: 1, User: "u", Database: "d"}
	err := connerr.Classify(cfg, fmt.Errorf("dial: %w", syscall.ECONNREFUSED))
	ce, ok := err.(*connerr.Error)
	if !ok || ce.Remedy != connerr.FixAddress {
		t.Fatalf("Classify: %#v, want a FixAddress remedy", err)
	}
	const head = "cannot connect to host=127.0.0.1 port=1 user=u dbname=d: no server is listening there"
	if got, want := ce.Error(), head+" (start the server or fix host/port in the connection string)"; got != want {
		t.Errorf("Error:\n%s\nwant\n%s", got, want)
	}
	if got, want := ce.In("--dsn"), head+" (start the server or fix host/port in --dsn)"; got != want {
		t.Errorf("In:\n%s\nwant\n%s", got, want)
	}
	free := &connerr.Error{Target: "t", Reason: "r", Fix: "retry"}
	if got := free.In("--dsn"); got != "cannot connect to t: r (retry)" {
		t.Errorf("a fix that is not a remedy: %s", got)
	}
}
