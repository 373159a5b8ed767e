package secret_test

import (
	"testing"

	"github.com/pgscale/pgscale/internal/secret"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://bench:s3cret@db1/app", "postgres://bench:xxxxx@db1/app"},
		{"postgresql://u:p%40ss@h:5432/d?sslmode=disable", "postgresql://u:xxxxx@h:5432/d?sslmode=disable"},
		{"host=db1 password=s3cret user=u", "host=db1 password=xxxxx user=u"},
		{"host=db1 password = 'a b\\'c' user=u", "host=db1 password = xxxxx user=u"},
		{"postgres://h/d?user=u&password=s3cret&x=1", "postgres://h/d?user=u&password=xxxxx&x=1"},
		{"postgres://bench@db1/app", "postgres://bench@db1/app"},
		{"--dsn=host=h password=x1", "--dsn=host=h password=xxxxx"},
	} {
		if got := secret.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if secret.Leaks(secret.Redact(tc.in)) {
			t.Errorf("Leaks(Redact(%q)) = true", tc.in)
		}
	}
}

// Every form Redact masks is a leak before it is masked, quoted values
// included: the check and the redaction follow one set of rules.
func TestLeaks(t *testing.T) {
	for _, tc := range []struct {
		in   string
		leak bool
	}{
		{"postgres://bench:s3cret@db1/app", true},
		{"host=db1 password = 'a b\\'c' user=u", true},
		{"host=db1 password='x y'", true},
		{"postgres://h/d?password=s3cret", true},
		{"host=db1 password=xxxxx", false},
		{"host=db1 password=''", false},
		{"host=db1 user=u", false},
		{"postgres://bench@db1/app", false},
		{"the password is not here", false},
	} {
		if got := secret.Leaks(tc.in); got != tc.leak {
			t.Errorf("Leaks(%q) = %v, want %v", tc.in, got, tc.leak)
		}
	}
}
