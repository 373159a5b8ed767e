package diagnose

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

// unavailable are the step's probes that could not run, each with its
// reason as the reports say it. A probe that failed because the step lost
// the pooler (or the server) it watched refers to that outage, which the
// step's evidence already names with its cause ("pooler lost at 10.5 s:
// pgbouncer (pid 7314) was killed by signal 9"), instead of saying it a
// second time as a raw error ("pooler: write unix ...: broken pipe"):
// the pooler's own probe whatever its error, any other probe when its
// error is a lost connection.
func unavailable(s result.Step) []result.ProbeUnavailable {
	if s.Probes == nil || len(s.Probes.Unavailable) == 0 {
		return nil
	}
	var pooler, server *result.Outage
	for i := range s.Outages {
		switch o := &s.Outages[i]; {
		case o.Pooler != "" && pooler == nil:
			pooler = o
		case o.Pooler == "" && server == nil:
			server = o
		}
	}
	out := make([]result.ProbeUnavailable, 0, len(s.Probes.Unavailable))
	for _, u := range s.Probes.Unavailable {
		switch {
		case pooler != nil && (u.Probe == probeid.Pooler.Name || strings.HasPrefix(u.Reason, "pooler") || lostConnection(u.Reason)):
			u.Reason = fmt.Sprintf("ended with the pooler, lost at %.1f s (the step's outage)", pooler.AtS)
		case server != nil && lostConnection(u.Reason):
			u.Reason = fmt.Sprintf("ended with the server, lost at %.1f s (the step's outage)", server.AtS)
		}
		out = append(out, u)
	}
	return out
}

// lostConnection says an error is a connection that went away under the
// probe, or a server no longer there to connect to.
func lostConnection(reason string) bool {
	r := strings.ToLower(reason)
	for _, s := range []string{"broken pipe", "connection reset", "unexpected eof", "conn closed", "connection refused", "server closed the connection", "no such file or directory"} {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}
