package result_test

import (
	"testing"

	"github.com/pgscale/pgscale/internal/result"
)

func TestFindPassword(t *testing.T) {
	for in, want := range map[string]string{
		`{"command": ["pgscale", "--dsn", "host=db password=xxxxx"]}`:                  "",
		`{"command": ["pgscale", "--dsn", "host=db password=s3cret"]}`:                 "command[2]",
		`{"target": {"settings": {"primary_conninfo": "user=r password=s3cret"}}}`:     "target.settings.primary_conninfo",
		`{"ab": {"targets": [{"spec": "dsn:postgres://u:s3cret@db/x"}]}}`:              "ab.targets[0].spec",
		`{"workload": {"defines": {"postgres://u:s3cret@db/x": "1"}}}`:                 "workload.defines.(a key)",
		`{"a": "password=", "b": "postgres://u@db/x", "c": 1, "d": null, "e": [true]}`: "",
	} {
		got, err := result.FindPassword([]byte(in))
		if err != nil || got != want {
			t.Errorf("FindPassword(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := result.FindPassword([]byte("{")); err == nil {
		t.Error("not JSON: no error")
	}
}
