package plan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/workload"
)

// AgentsSpec spreads a run's clients over agents, pgscale agent processes
// on other machines (or on this one, from loopback addresses of their own),
// through a coordination database (run --agents N --coordinator DSN). The
// probes, disturbances and diagnosis stay with the run.
type AgentsSpec struct {
	Count int
	// Coordinator is the coordination database's connection string.
	Coordinator string
	// Job names the run for the agents (default agent.DefaultJob).
	Job string
	// JoinTimeout bounds the wait for the agents to join and, in each
	// step, to connect their clients; LostAfter is how long an agent may
	// be silent before the step fails.
	JoinTimeout, LostAfter time.Duration
	// TargetDSN is the target's connection string as the agents reach it
	// (no password); default the run's own, password removed.
	TargetDSN string
}

// loopbackHBA lets clients from any loopback address reach an ephemeral
// cluster: agents on this machine stand for several by connecting from
// 127.0.0.11, .12...
const loopbackHBA = "host all all 127.0.0.0/8 trust"

// checkAgents refuses what a run on agents cannot do, before anything
// starts, and makes an ephemeral target reachable by them: over TCP, from
// any loopback address.
func (spec *RunSpec) checkAgents() error {
	a := spec.Agents
	switch {
	case a == nil:
		return nil
	case a.Count < 1:
		return usage.Errorf("--agents must be at least 1, got %d", a.Count)
	case a.Coordinator == "":
		return usage.Errorf("--agents needs --coordinator DSN: the PostgreSQL database that holds the barrier and the agents' data")
	case spec.Pooler != "":
		return usage.Errorf("--agents and --pooler: the agents cannot reach a pooler pgscale starts on its own socket; run the pooler yourself and give --dsn")
	case spec.counting():
		return usage.Errorf("--agents and --count instructions: counting quiesces the clients at the window's edges, which agents on other machines cannot do")
	case spec.Transactions != nil:
		return usage.Errorf("--agents: a transaction log (-l) is written by the process that runs the clients; the agents do not write one")
	case spec.Load.SourceAddress != "":
		return usage.Errorf("--agents and --source-address: give each agent its own --source-address")
	}
	if spec.Target.Ephemeral() {
		spec.Cluster.TCP = true
		spec.Cluster.HBA = append(spec.Cluster.HBA, loopbackHBA)
	}
	return nil
}

// openAgents opens the run in the coordination database, so that the
// agents can join while the target starts; nil without agents.
func (spec *RunSpec) openAgents(ctx context.Context) (*agent.Coordinator, error) {
	a := spec.Agents
	if a == nil {
		return nil, nil
	}
	return agent.Open(ctx, agent.Config{DSN: a.Coordinator, Job: a.Job, Agents: a.Count, JoinTimeout: a.JoinTimeout,
		LostAfter: a.LostAfter, Log: spec.notice})
}

// gatherAgents tells the coordinator what every step runs, and waits for
// every agent to join.
func (c *Common) gatherAgents(ctx context.Context, coord *agent.Coordinator, p *prepared, wl *workload.Loaded, dsn string) error {
	w := agent.Workload{Defines: wl.Defines, Protocol: wl.Protocol.String(), Seed: wl.Seed, Scale: p.data.Scale, Threads: c.Load.Threads}
	for _, s := range wl.Scripts {
		w.Scripts = append(w.Scripts, agent.Script{Name: s.Name, Source: s.Source, Weight: s.Weight})
	}
	if dsn == "" {
		dsn = agent.TargetDSN(p.srv.Config)
	}
	coord.Prepare(w, dsn)
	return coord.Gather(ctx)
}

// agentFiles writes each agent's own result file, its share of every step,
// beside the run's (in <file>.agents/), and records them in file.Agents.
func agentFiles(file *result.File, coord *agent.Coordinator, perAgent [][]result.Step, path string) error {
	dir := strings.TrimSuffix(path, ".json") + ".agents"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("agents' result files: %w", err)
	}
	members := coord.Members()
	for i := range file.Agents {
		if i >= len(perAgent) || i >= len(members) {
			break
		}
		af := *file
		af.Environment = members[i].Environment
		af.Steps = perAgent[i]
		af.Agents = []result.Agent{file.Agents[i]}
		af.Diagnosis = nil
		af.Complete = file.Complete
		for _, s := range af.Steps {
			if !s.Complete && af.Complete {
				af.Complete, af.Reason = false, s.Reason
			}
		}
		name := fmt.Sprintf("agent-%d.json", i)
		if err := result.Write(filepath.Join(dir, name), &af); err != nil {
			return fmt.Errorf("agent %d's result file: %w", i, err)
		}
		file.Agents[i].File = filepath.Join(filepath.Base(dir), name)
	}
	return nil
}
