package target

import (
	"reflect"
	"testing"
)

// The settings a pooler target runs with: pgscale's defaults, room for the
// clients, prepared statements kept where pgbouncer can, then the spec's
// own in the defaults' places.
func TestPoolerSettings(t *testing.T) {
	own := []Setting{{"pool_mode", "session"}, {"server_lifetime", "60"}}
	got := poolerSettings("1.18.0", Needs{Clients: 2000, Prepared: true}, own)
	want := []Setting{{"pool_mode", "session"}, {"default_pool_size", "20"}, {"log_connections", "0"},
		{"log_disconnections", "0"}, {"max_client_conn", "2010"}, {"server_lifetime", "60"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("1.18: %v, want %v", got, want)
	}
	got = poolerSettings("1.22.1", Needs{Clients: 5, Prepared: true}, nil)
	if settingValue(got, "max_prepared_statements") != "200" || settingValue(got, "max_client_conn") != "100" {
		t.Errorf("1.22 with -M prepared: %v, want max_prepared_statements=200 and max_client_conn=100", got)
	}
	if got := poolerSettings("1.22.1", Needs{Clients: 5}, nil); settingValue(got, "max_prepared_statements") != "" {
		t.Errorf("1.22 without -M prepared: %v", got)
	}
	for v, want := range map[string]bool{"1.18.0": false, "1.21": true, "1.21.0": true, "2.0": true, "1.9.0": false} {
		if versionAtLeast(v, preparedSince) != want {
			t.Errorf("versionAtLeast(%q, 1.21) = %v", v, !want)
		}
	}
}
