package integration_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/testenv"
)

// A server restarted in the middle of a step (the package's cluster,
// restarted by the tool's own cluster code): the clients reconnect and
// the step completes; the probes find the new postmaster and keep
// sampling; the step is marked with the outage — when, how long without
// a server, the transactions it failed, the postmaster before and after —
// in the text, the result file and the HTML report; and the diagnosis
// judges no bottleneck on it, least of all the client.
func TestServerRestartMidStep(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	dir := t.TempDir()
	out, html := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	stderr := &syncBuffer{watch: "step 1/1", seen: make(chan struct{})}
	restarted := make(chan error, 1)
	before := cluster.PID()
	go func() {
		<-stderr.seen
		time.Sleep(2 * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		restarted <- cluster.Restart(ctx)
	}()
	code, stdout := abCLI(t, stderr, "run", "--dsn", dsn("postgres"), "-S", "-c", "2", "-T", "7", "--warmup", "0", "-n",
		"--wait-source", "pg_stat_activity", "--out", out, "--html", html)
	if err := <-restarted; err != nil {
		t.Fatalf("restart: %v", err)
	}
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, lastLines(stderr.String(), 5))
	}
	f := readResult(t, out)
	s := f.Steps[0]
	if !s.Complete || len(s.Outages) != 1 {
		t.Fatalf("step complete %v, outages %+v", s.Complete, s.Outages)
	}
	o := s.Outages[0]
	if !o.Restarted() || o.PostmasterBefore != before || o.PostmasterAfter != cluster.PID() || !o.AllBack || o.Clients != 2 || o.Failed < 1 ||
		!(o.AtS > 1 && o.AtS < 5) || !(o.ServerS > 0 && o.ServerS <= o.BackS) {
		t.Errorf("outage %+v; postmaster %d, then %d", o, before, cluster.PID())
	}
	if s.Summary.Failed != o.Failed {
		t.Errorf("%d transactions failed in the step, %d in the outage", s.Summary.Failed, o.Failed)
	}
	p := s.Probes
	if p.Process() == nil || p.Process().Server == nil || !strings.Contains(p.Process().ServerNote, "restarted during the step") {
		t.Errorf("the process probe did not find the server again: %+v", p.Process())
	}
	if p.Waits() == nil || p.Waits().Samples == 0 || p.Waits().PausedS <= 0 {
		t.Errorf("the waits probe did not sample on after the restart: %+v (unavailable %v)", p.Waits(), p.Unavailable)
	}
	v := f.Diagnosis.Steps[0]
	if v.Verdict != diagnose.Unclear || !strings.Contains(v.Detail, "the server restarted during the step") {
		t.Errorf("verdict %s: %s", v.Verdict, v.Detail)
	}
	if !strings.Contains(stdout, "server restart (postmaster ") || strings.Contains(stdout, "client-bound") {
		t.Errorf("the text does not say it, or blames the client:\n%s", stdout)
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), "server restart (postmaster ") {
		t.Errorf("the HTML report does not say it (%v)", err)
	}
}
