package rig

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/step"
)

// OpenAgents opens the run in the coordination database, so that the
// agents can join while the targets start; nil without agents.
func OpenAgents(ctx context.Context, exp *experiment.Common, a *experiment.Agents) (*agent.Coordinator, error) {
	if a == nil {
		return nil, nil
	}
	return agent.Open(ctx, agent.Config{DSN: a.Coordinator, Job: a.Job, Agents: a.Count, JoinTimeout: a.JoinTimeout,
		LostAfter: a.LostAfter, Log: exp.Notice})
}

// Gather tells the rig's agents what every step runs — the workload, and
// the baseline as they reach it: dsn when given, else its own connection
// string without password — and waits for every agent to join (the
// first time: a suite's agents stay for all its cells). Without agents
// it does nothing.
func (r *Rig) Gather(ctx context.Context, dsn string) error {
	if r.coord == nil {
		return nil
	}
	for _, t := range r.targets {
		t.agentSteps = nil // a suite's earlier cell's
	}
	base := r.targets[0]
	wl := r.exp.Workload
	w := agent.Workload{Defines: wl.Defines, Protocol: wl.Protocol.String(), Seed: wl.Seed, Scale: base.data.Scale, Threads: r.exp.Load.Threads}
	for _, s := range wl.Scripts {
		w.Scripts = append(w.Scripts, agent.Script{Name: s.Name, Source: s.Source, Weight: s.Weight})
	}
	r.coord.Prepare(w, agentTarget(base, dsn))
	return r.coord.Gather(ctx)
}

// agentTarget is t's connection string as the agents reach it: dsn when
// given, else t's own without password, with the settings its clients
// set per session (a settings target on its baseline's cluster).
func agentTarget(t *Target, dsn string) string {
	if dsn != "" {
		return dsn
	}
	return agent.TargetDSN(t.srv.Config)
}

// keepAgents lists the agents of step s on t, and keeps each one's own
// step (an agent without clients in the step has none).
func (r *Rig) keepAgents(t *Target, s *result.Step, prog *script.Program, round int) {
	o := r.coord.Last()
	if o == nil {
		return
	}
	s.Agents = o.Agents
	if len(t.agentSteps) < len(o.Results) {
		t.agentSteps = append(t.agentSteps, make([][]result.Step, len(o.Results)-len(t.agentSteps))...)
	}
	for i, res := range o.Results {
		if res.Clients == 0 {
			continue
		}
		as := step.Result(res, prog.Scripts())
		as.Round = round
		t.agentSteps[i] = append(t.agentSteps[i], as)
	}
}

// AgentTotals are the agents as a result file lists them: who they are,
// their most certain clock offset, and their transactions in steps (one
// target's, in an A/B run).
func (r *Rig) AgentTotals(steps []result.Step) []result.Agent {
	out := r.coord.AgentTotals()
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

// RecordAgents records in file the coordination and the agents, with
// their totals: all their transactions (a sweep's file), or those in the
// file's steps (one target's of an A/B run). It does nothing without
// agents.
func (r *Rig) RecordAgents(file *result.File, all bool) {
	if r.coord == nil {
		return
	}
	file.Coordination, file.Agents = r.coord.Coordination(), r.coord.AgentTotals()
	if !all {
		file.Agents = r.AgentTotals(file.Steps)
	}
}

// AgentFiles writes each agent's own result file, its share of every step
// on target ti, beside the target's file at path (in <file>.agents/), and
// records them in file.Agents (RecordAgents). It does nothing without
// agents.
func (r *Rig) AgentFiles(file *result.File, ti int, path string) error {
	if r.coord == nil {
		return nil
	}
	perAgent := r.targets[ti].agentSteps
	dir := strings.TrimSuffix(path, ".json") + ".agents"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("agents' result files: %w", err)
	}
	members := r.coord.Members()
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
