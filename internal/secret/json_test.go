package secret_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/secret"
)

func TestFindInJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"command": ["pgscale", "--dsn", "host=db password=xxxxx"]}`:                  "",
		`{"command": ["pgscale", "--dsn", "host=db password=s3cret"]}`:                 "command[2]",
		`{"target": {"settings": {"primary_conninfo": "user=r password=s3cret"}}}`:     "target.settings.primary_conninfo",
		`{"ab": {"targets": [{"spec": "dsn:postgres://u:s3cret@db/x"}]}}`:              "ab.targets[0].spec",
		`{"workload": {"defines": {"postgres://u:s3cret@db/x": "1"}}}`:                 "workload.defines.(a key)",
		`{"a": "password=", "b": "postgres://u@db/x", "c": 1, "d": null, "e": [true]}`: "",
	} {
		got, err := secret.FindInJSON([]byte(in))
		if err != nil || got != want {
			t.Errorf("FindInJSON(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := secret.FindInJSON([]byte("{")); err == nil {
		t.Error("not JSON: no error")
	}
}

// A document with a password anywhere is written again without it.
func TestRedactJSON(t *testing.T) {
	in := `{"target": {"settings": {"primary_conninfo": "user=r password='s3 cret'"}}, "n": 1, "l": ["postgres://u:s3cret@db/x"]}`
	out, err := secret.RedactJSON([]byte(in), " ")
	if err != nil {
		t.Fatal(err)
	}
	if where, _ := secret.FindInJSON(out); where != "" || !strings.Contains(string(out), "password=xxxxx") || !strings.Contains(string(out), `"n": 1`) {
		t.Errorf("RedactJSON: %s (leak at %q)", out, where)
	}
}
