package report_test

import (
	stdhtml "html"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/compare/comparetest"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
)

// A pooler that died is said once, as the outage that names its death:
// its probe's line refers to that outage instead of repeating it as a raw
// error ("pooler: ... broken pipe"); a probe that failed for a reason of
// its own still says it.
func TestPoolerDeathSaidOnce(t *testing.T) {
	inputs := comparetest.Files(t, comparetest.TwoSides(), []int{1}, 1)[:1]
	s := &inputs[0].File.Steps[0]
	s.Outages = []result.Outage{{AtS: 10.5, Clients: 1, Failed: 1, Pooler: "pgbouncer (pid 7314) was killed by signal 9 (killed)"}}
	s.Probes = &result.Probes{ElapsedS: 12, Unavailable: []result.ProbeUnavailable{
		{Probe: "pooler", Reason: "SHOW POOLS: write unix @->/tmp/pgscale-proxy-1/.s.PGSQL.6432: write: broken pipe"},
		{Probe: "waits", Reason: "pg_wait_sampling is not installed"},
	}}
	d := report.NewDoc(compare.Analyze(inputs, compare.Compared{}))
	for _, format := range []string{"text", "markdown", "html"} {
		out := strings.ReplaceAll(string(write(t, format, d)), `\_`, "_")
		if format == "html" {
			out, _, _ = strings.Cut(stdhtml.UnescapeString(out), `id="pgscale-data"`) // the page, not its data block
		}
		if strings.Contains(out, "broken pipe") || !strings.Contains(out, "pgbouncer (pid 7314) was killed by signal 9") ||
			!strings.Contains(out, "ended with the pooler, lost at 10.5 s (the step's outage)") || !strings.Contains(out, "pg_wait_sampling is not installed") {
			t.Errorf("%s:\n%s", format, out)
		}
	}
}
