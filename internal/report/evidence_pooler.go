package report

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerWriter(probeid.Pooler, writePooler) }

// writePooler writes what the pooler's admin console said: the whole
// pooler, then each pool when there are several.
func writePooler(pg page, s result.Step, _ diagnose.Figures) {
	p := s.Probes.Pooler()
	if p == nil {
		return
	}
	line := PoolLine(p.Total)
	if p.Total.Transactions != nil {
		line += fmt.Sprintf(" (the load %d)", p.LoadTransactions)
	}
	own := ""
	if p.OwnConnection {
		own = ", its own session left out"
	}
	pg.item("pools", fmt.Sprintf("%s; %s read %d times over %.1f s%s", line, strings.Join(p.Commands, ", "), p.Samples, p.WindowS, own))
	if len(p.Pools) > 1 {
		for _, pool := range p.Pools {
			name := pool.Pool
			if name == "" {
				name = "(unnamed)"
			}
			pg.item("  pool "+name, PoolLine(pool))
		}
	}
}

// PoolLine says a pool's figures in a line: "clients 4.0 active, 27.9
// waiting (at most 28); server connections 4.0 active, 0.0 idle; longest
// wait 12.3 ms; 1.24 ms waited per transaction; counted 12345
// transactions, 12345 queries". A figure its mapping lacks is left out.
func PoolLine(f result.PoolFigures) string {
	type named struct {
		name string
		g    *result.Gauge
	}
	var parts []string
	gauges := func(what string, gs ...named) {
		var xs []string
		for _, g := range gs {
			if g.g == nil {
				continue
			}
			x := fmt.Sprintf("%.1f %s", g.g.Mean, g.name)
			if g.g.Max > g.g.Mean+0.05 {
				x += fmt.Sprintf(" (at most %.0f)", g.g.Max)
			}
			xs = append(xs, x)
		}
		if len(xs) > 0 {
			parts = append(parts, what+" "+strings.Join(xs, ", "))
		}
	}
	gauges("clients", named{"active", f.ClientsActive}, named{"waiting", f.ClientsWaiting})
	gauges("server connections", named{"active", f.ServersActive}, named{"idle", f.ServersIdle}, named{"used", f.ServersUsed})
	if f.MaxWaitMs != nil {
		parts = append(parts, fmt.Sprintf("longest wait %s", msText(*f.MaxWaitMs)))
	}
	if f.WaitPerTxnUS != nil {
		parts = append(parts, fmt.Sprintf("%s waited per transaction", msText(*f.WaitPerTxnUS/1000)))
	} else if f.WaitUS != nil {
		parts = append(parts, fmt.Sprintf("%s waited in all", msText(*f.WaitUS/1000)))
	}
	var counted []string
	if f.Transactions != nil {
		counted = append(counted, fmt.Sprintf("%d transactions", *f.Transactions))
	}
	if f.Queries != nil {
		counted = append(counted, fmt.Sprintf("%d queries", *f.Queries))
	}
	if len(counted) > 0 {
		parts = append(parts, "counted "+strings.Join(counted, ", "))
	}
	if len(parts) == 0 {
		return "no figures"
	}
	return strings.Join(parts, "; ")
}

// msText writes a duration in milliseconds with the digits it needs:
// "12.3 ms", "0.045 ms".
func msText(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.3f ms", ms)
}
