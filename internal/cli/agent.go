package cli

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/agent"
	"github.com/pgscale/pgscale/internal/experiment"
	"github.com/pgscale/pgscale/internal/syncio"
	"github.com/pgscale/pgscale/internal/usage"
)

func newAgentCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		coordinator, job, source string
		index                    int
		wait                     time.Duration
		manifest                 bool
		mo                       agent.ManifestOptions
	)
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run one share of a run's clients, from another machine (a pod of an Indexed Job)",
		Long: `Join the newest open run of a job in the coordination database (started by
pgscale run, ab or suite with --agents N --coordinator DSN), and run this
agent's share of every step's clients (an A/B's targets in their turns): a contiguous range of client ids, connected before a barrier,
started at an instant set on the database server's clock. Each interval's
counts and HDR histogram go back through the database, where the run adds
them up exactly. The index comes from --index or JOB_COMPLETION_INDEX (set by
Kubernetes in an Indexed Job); the coordination database from --coordinator
or PGSCALE_COORDINATOR (from a Secret in a pod). The target's password never
travels: the agent takes it from its own PGPASSWORD or .pgpass.

With --manifest, print the Kubernetes Indexed Job that runs N agents, and run
nothing (docs/agents.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fs := cmd.Flags()
			if manifest {
				mo.Args = []string{"agent", "--job", job}
				if source != "" {
					mo.Args = append(mo.Args, "--source-address", source)
				}
				j, err := agent.Manifest(mo)
				if err != nil {
					return err
				}
				return agent.WriteManifest(stdout, j)
			}
			cfg := agent.AgentConfig{Coordinator: coordinator, Index: index, Job: job, Wait: wait}
			if cfg.Coordinator == "" {
				cfg.Coordinator = os.Getenv(agent.EnvCoordinator)
			}
			if !fs.Changed("index") {
				v, ok := os.LookupEnv(agent.EnvIndex)
				if !ok {
					return usage.Errorf("give the agent's index: --index N, or %s (Kubernetes sets it in an Indexed Job)", agent.EnvIndex)
				}
				n, err := strconv.Atoi(v)
				if err != nil {
					return usage.Errorf("%s=%q is not an index", agent.EnvIndex, v)
				}
				cfg.Index = n
			}
			if source != "" {
				if cfg.SourceAddr = net.ParseIP(source); cfg.SourceAddr == nil {
					return usage.Errorf("--source-address %q is not an IP address", source)
				}
			}
			log := syncio.NewWriter(stderr)
			cfg.Log = func(s string) { fmt.Fprintln(log, "pgscale agent: "+s) }
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			return agent.Serve(ctx, cfg)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&coordinator, "coordinator", "", "connection string of the coordination database (default $"+agent.EnvCoordinator+")")
	fs.IntVar(&index, "index", 0, "this agent's index, 0 to N-1 (default $"+agent.EnvIndex+")")
	fs.StringVar(&job, "job", agent.DefaultJob, "join the newest open run of this job (run --agents-job)")
	fs.StringVar(&source, "source-address", "", "local address the clients bind when they connect over TCP (a machine with several addresses; 127.0.0.11 and up for agents on one machine)")
	fs.Var(seconds{&wait}, "wait", "how long to wait for an open run to join")
	wait = agent.DefaultWait
	fs.BoolVar(&manifest, "manifest", false, "print the Kubernetes Indexed Job of --agents N agents, and run nothing")
	fs.IntVar(&mo.Agents, "agents", 0, "--manifest: the number of agents (completions = parallelism)")
	fs.StringVar(&mo.Image, "image", "", "--manifest: the pgscale image (docker build -t IMAGE . with the repository's Dockerfile)")
	fs.StringVar(&mo.Name, "name", "pgscale-agents", "--manifest: the Job's name")
	fs.StringVar(&mo.Namespace, "namespace", "", "--manifest: the Job's namespace (default kubectl's)")
	fs.StringVar(&mo.Secret, "secret", "", "--manifest: the Secret holding the coordination database's connection string")
	fs.StringVar(&mo.SecretKey, "secret-key", "coordinator", "--manifest: its key in that Secret")
	fs.StringVar(&mo.PasswordSecret, "password-secret", "", "--manifest: a Secret whose key \"password\" is the target's password (PGPASSWORD)")
	fs.StringVar(&mo.CPU, "cpu", "1", "--manifest: each agent's CPU request")
	fs.StringVar(&mo.Memory, "memory", "512Mi", "--manifest: each agent's memory request and limit")
	fs.BoolVar(&mo.Spread, "spread", false, "--manifest: never two agents on one node (pod anti-affinity)")
	return cmd
}

// agentFlags are the flags that spread a run's clients over agents (run,
// ab, suite).
type agentFlags struct {
	a      experiment.Agents
	source string
}

// register registers them; run's --source-address (the clients' local
// address, when they run here) too.
func (f *agentFlags) register(fs *pflag.FlagSet, source bool) {
	fs.IntVar(&f.a.Count, "agents", 0, "run the clients on N agents (pgscale agent, e.g. the pods of an Indexed Job) that join through --coordinator; probes, disturbances and the diagnosis stay here")
	fs.StringVar(&f.a.Coordinator, "coordinator", "", "--agents: connection string of the coordination database (PostgreSQL: the history store's, or any)")
	fs.StringVar(&f.a.Job, "agents-job", agent.DefaultJob, "--agents: the job name the agents join under (their --job)")
	f.a.JoinTimeout, f.a.LostAfter = agent.DefaultJoinTimeout, agent.DefaultLostAfter
	fs.Var(seconds{&f.a.JoinTimeout}, "agents-timeout", "--agents: how long the agents have to join, and in each step to connect their clients")
	fs.Var(seconds{&f.a.LostAfter}, "agents-lost-after", "--agents: an agent silent this long fails the step")
	fs.StringVar(&f.a.TargetDSN, "agents-dsn", "", "--agents: the target's connection string as the agents reach it, without password (default the run's own; run only)")
	if source {
		fs.StringVar(&f.source, "source-address", "", "local address the clients bind when they connect over TCP")
	}
}

// agents is the agents the flags ask for: nil unless --agents or
// --coordinator was given.
func (f *agentFlags) agents(fs *pflag.FlagSet) *experiment.Agents {
	if fs.Changed("agents") || fs.Changed("coordinator") {
		a := f.a
		return &a
	}
	return nil
}

// apply puts --source-address into g, and returns the agents the flags
// ask for (agents).
func (f *agentFlags) apply(fs *pflag.FlagSet, g *common) *experiment.Agents {
	g.Load.SourceAddress = f.source
	return f.agents(fs)
}
