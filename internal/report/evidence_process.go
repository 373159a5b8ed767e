package report

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerWriter(probeid.Process, writeProcess) }

// writeProcess writes where the machine's CPU went, the server's
// processes by kind and the pooler's.
func writeProcess(pg page, s result.Step, f diagnose.Figures) {
	ps := s.Probes.Process()
	if ps == nil || !f.HasHost {
		return
	}
	line := fmt.Sprintf("%s busy of %d cores", prose.Share(f.MachineBusy), ps.CPUs)
	if f.HasServer {
		line += "; of the machine: server " + prose.Share(f.ServerShare)
		if f.HasPooler {
			line += ", pooler " + prose.Share(f.PoolerShare)
		}
		line += fmt.Sprintf(", load generator %s, probes %s, other %s", prose.Share(f.GeneratorShare), prose.Share(f.ProbeShare), prose.Share(f.Elsewhere()))
	} else {
		line += fmt.Sprintf("; of the machine: load generator %s, probes %s; %s", prose.Share(f.GeneratorShare), prose.Share(f.ProbeShare), ps.ServerNote)
	}
	line += fmt.Sprintf("; run queue %.2f tasks waiting per core", f.RunQueuePerCore)
	if ps.Host.PSI != nil {
		line += fmt.Sprintf("; pressure: cpu %s, io %s", prose.Share(ps.Host.PSI.CPUSome), prose.Share(ps.Host.PSI.IOSome))
	}
	if ps.Host.StealShare >= loudSteal {
		line += fmt.Sprintf("; steal %.1f%%", 100*ps.Host.StealShare)
	}
	pg.item("cpu", line)
	if ps.Server != nil {
		var kinds []string
		for _, k := range ps.Server.ByKind {
			if k.Kind == result.KindExited {
				// No run-queue wait (lost with them), and no "×0" for
				// processes that came and went within the step.
				n := ""
				if k.Processes > 0 {
					n = fmt.Sprintf(" ×%d", k.Processes)
				}
				kinds = append(kinds, fmt.Sprintf("%s%s %.2f s", k.Kind, n, k.CPUS))
				continue
			}
			kinds = append(kinds, fmt.Sprintf("%s ×%d %.2f s (run-queue wait %.2f s)", k.Kind, k.Processes, k.CPUS, k.RunQueueWaitS))
		}
		line := strings.Join(kinds, "; ")
		if len(s.Outages) > 0 && ps.ServerNote != "" {
			line += "; " + ps.ServerNote // the server restarted: how its processes were counted
		}
		pg.item("server", line)
	}
	if ps.Pooler != nil && f.ElapsedS > 0 {
		line := fmt.Sprintf("%.2f s cpu (%s of the machine), run-queue wait %.2f s", ps.Pooler.CPUS,
			prose.Share(ps.Pooler.CPUS/(f.ElapsedS*float64(ps.CPUs))), ps.Pooler.RunQueueWaitS)
		if ps.PoolerNote != "" {
			line += "; " + ps.PoolerNote
		}
		pg.item("pooler", line)
	}
}
