package workload_test

import (
	"errors"
	"testing"

	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// An option pgbench would refuse is a usage error that says which field
// and why, in no flag's words: the edge names the flag.
func TestOptionErrors(t *testing.T) {
	ok := workload.InitOptions{Scale: 1, Fillfactor: 100, PartitionMethod: "range"}
	for _, tc := range []struct {
		field string
		err   error
		why   string
	}{
		{"Scale", func() error { o := ok; o.Scale = 0; return o.Check() }(), "must be at least 1"},
		{"Fillfactor", func() error { o := ok; o.Fillfactor = 5; return o.Check() }(), "must be between 10 and 100"},
		{"Partitions", func() error { o := ok; o.Partitions = -1; return o.Check() }(), "must be at least 0"},
		{"PartitionMethod", func() error { o := ok; o.PartitionMethod = "list"; return o.Check() }(), "must be range or hash"},
		{"Steps", func() error { o := ok; o.Steps = "dtx"; return o.Check() }(), `unrecognized initialization step "x"`},
		{"Protocol", func() error { _, err := workload.Load(workload.Spec{Protocol: "telepathy"}); return err }(),
			`unknown protocol "telepathy" (want simple, extended or prepared)`},
		{"Seed", func() error { _, err := workload.Load(workload.Spec{Seed: "soon"}); return err }(), `"soon" is not time, rand or an integer`},
	} {
		var oe *workload.OptionError
		if !errors.As(tc.err, &oe) || !usage.Is(tc.err) {
			t.Errorf("%s: %v (usage %v), want a usage error and an OptionError", tc.field, tc.err, usage.Is(tc.err))
			continue
		}
		if oe.Field != tc.field || oe.Err.Error() != tc.why {
			t.Errorf("%s: field %q, why %q; want %q", tc.field, oe.Field, oe.Err, tc.why)
		}
	}
	if err := ok.Check(); err != nil {
		t.Errorf("%+v: %v", ok, err)
	}
}
