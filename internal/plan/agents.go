package plan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/target"
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
	if a == nil {
		return nil
	}
	if err := a.check(&spec.Common); err != nil {
		return err
	}
	if spec.Pooler != "" {
		return usage.Errorf("--agents and --pooler: the agents cannot reach a pooler pgscale starts on its own socket; run the pooler yourself and give --dsn")
	}
	reachable(&spec.Cluster, []target.Spec{spec.Target})
	return nil
}

// checkAgents is checkAgents for an A/B run (and so a suite's cells):
// whole-step turns, each target's step through the coordinator in turn;
// slices are refused, as a pooler pgscale starts is, and --agents-dsn,
// which names one target where an A/B has several.
func (spec *ABSpec) checkAgents(specs []target.Spec) error {
	a := spec.Agents
	if a == nil {
		return nil
	}
	if err := a.check(&spec.Common); err != nil {
		return err
	}
	if a.TargetDSN != "" {
		return usage.Errorf("--agents-dsn names one target; the agents of an A/B get each target's own connection string (without password): give targets the agents reach as dsn:")
	}
	for _, s := range specs {
		if len(s.Front) > 0 {
			return usage.Errorf("--agents and target %s: the agents cannot reach a pooler or proxy pgscale starts on its own socket; run it yourself and give it as dsn:", s.Name)
		}
	}
	reachable(&spec.Cluster, specs)
	return nil
}

// check refuses what agents cannot do in any run.
func (a *AgentsSpec) check(c *Common) error {
	switch {
	case a.Count < 1:
		return usage.Errorf("--agents must be at least 1, got %d", a.Count)
	case a.Coordinator == "":
		return usage.Errorf("--agents needs --coordinator DSN: the PostgreSQL database that holds the barrier and the agents' data")
	case c.counting():
		return usage.Errorf("--agents and --count instructions: counting quiesces the clients at the window's edges, which agents on other machines cannot do")
	case c.Transactions != nil:
		return usage.Errorf("--agents: a transaction log (-l) is written by the process that runs the clients; the agents do not write one")
	case c.Load.SourceAddress != "":
		return usage.Errorf("--agents and --source-address: give each agent its own --source-address")
	}
	return nil
}

// reachable makes the ephemeral clusters among specs reachable by agents:
// listening on 127.0.0.1 too, and letting every loopback address in.
func reachable(o *target.ClusterOptions, specs []target.Spec) {
	for _, s := range specs {
		if s.Ephemeral() {
			o.TCP = true
			if !slices.Contains(o.HBA, loopbackHBA) {
				o.HBA = append(o.HBA, loopbackHBA)
			}
			return
		}
	}
}

// openAgents opens the run in the coordination database, so that the
// agents can join while the targets start; nil without agents.
func (c *Common) openAgents(ctx context.Context, a *AgentsSpec) (*agent.Coordinator, error) {
	if a == nil {
		return nil, nil
	}
	return agent.Open(ctx, agent.Config{DSN: a.Coordinator, Job: a.Job, Agents: a.Count, JoinTimeout: a.JoinTimeout,
		LostAfter: a.LostAfter, Log: c.notice})
}

// gatherAgents tells the coordinator what every step runs, and waits for
// every agent to join (the first time: a suite's agents stay for all its
// cells).
func (c *Common) gatherAgents(ctx context.Context, coord *agent.Coordinator, p *prepared, wl *workload.Loaded, dsn string) error {
	coord.Prepare(agentWorkload(c, p, wl), agentTarget(p, dsn))
	return coord.Gather(ctx)
}

// agentWorkload is the workload as the agents get it: the scripts' text,
// the seed, the scale read from p's data.
func agentWorkload(c *Common, p *prepared, wl *workload.Loaded) agent.Workload {
	w := agent.Workload{Defines: wl.Defines, Protocol: wl.Protocol.String(), Seed: wl.Seed, Scale: p.data.Scale, Threads: c.Load.Threads}
	for _, s := range wl.Scripts {
		w.Scripts = append(w.Scripts, agent.Script{Name: s.Name, Source: s.Source, Weight: s.Weight})
	}
	return w
}

// agentTarget is p's connection string as the agents reach it: dsn when
// given, else p's own without password, with the settings its clients set
// per session (a settings target on its baseline's cluster).
func agentTarget(p *prepared, dsn string) string {
	if dsn != "" {
		return dsn
	}
	return agent.TargetDSN(p.srv.Config)
}

// agentTotals are the agents as a result file lists them: who they are,
// their most certain clock offset, and their transactions in steps (one
// target's, in an A/B run).
func agentTotals(coord *agent.Coordinator, steps []result.Step) []result.Agent {
	out := coord.AgentTotals()
	for i := range out {
		out[i].Transactions = 0
		for _, s := range steps {
			for _, sa := range s.Agents {
				if sa.Index == out[i].Index {
					out[i].Transactions += sa.Transactions
				}
			}
		}
	}
	return out
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
