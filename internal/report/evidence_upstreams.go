package report

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerWriter(probeid.Upstreams, writeUpstreams) }

// writeUpstreams writes how the work split between the servers behind the
// target, and the replicas' lag.
func writeUpstreams(pg page, s result.Step, _ diagnose.Figures) {
	if line := UpstreamsLine(s.Probes.Upstreams()); line != "" {
		pg.item("upstreams", line)
	}
}

// UpstreamsLine says in a line how the work split between the servers
// behind a target and how far the replicas lagged: "primary 52% (8 120
// statements), a-replica1 48% (7 480, 0 B behind); replay lag 0.4 ms".
func UpstreamsLine(u *result.Upstreams) string {
	if u == nil || len(u.Servers) == 0 {
		return ""
	}
	var parts []string
	var lag []string
	for _, s := range u.Servers {
		name := s.Name
		if name == "" {
			name = s.Role
		}
		what := fmt.Sprintf("%d transactions", s.Transactions)
		if s.Statements != nil {
			what = fmt.Sprintf("%d statements", *s.Statements)
		}
		p := fmt.Sprintf("%s %s (%s", name, prose.Share(s.Share), what)
		if s.LagBytes != nil {
			p += ", " + bytesText(*s.LagBytes) + " behind"
		}
		parts = append(parts, p+")")
		if s.ReplayLagMs != nil {
			lag = append(lag, fmt.Sprintf("%s's replicas' replay lag %.1f ms", name, *s.ReplayLagMs))
		}
	}
	line := strings.Join(parts, ", ")
	if len(lag) > 0 {
		line += "; " + strings.Join(lag, ", ")
	}
	return line
}

// bytesText writes a WAL distance in bytes, kB or MB.
func bytesText(n int64) string {
	switch {
	case n < 10_000:
		return fmt.Sprintf("%d B", n)
	case n < 10_000_000:
		return fmt.Sprintf("%d kB", n/1000)
	}
	return fmt.Sprintf("%d MB", n/1_000_000)
}
