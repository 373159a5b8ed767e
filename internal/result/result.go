// Package result defines pgscale's result file — the contract between
// measuring (run, ab) and analysing (compare, report) — and writes it
// atomically, reads it and validates it.
package result

import (
	"sort"
	"time"
)

// Schema identifies pgscale result files; Version is bumped on any
// incompatible change, and Read accepts every version it knows.
const (
	Schema  = "pgscale.result"
	Version = 2 // 2: steps carry probes, the file a diagnosis
)

// File is one result file: one workload over a client sweep on one target.
type File struct {
	Schema   string    `json:"schema"`
	Version  int       `json:"version"`
	Pgscale  string    `json:"pgscale_version"`
	Complete bool      `json:"complete"`
	Reason   string    `json:"incomplete_reason,omitempty"`
	Command  []string  `json:"command"` // argv, passwords redacted
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Expect are the decision rules the run was given (run --expect), as
	// written; readers check them again from the steps.
	Expect      []string    `json:"expect,omitempty"`
	Environment Environment `json:"environment"`
	Target      Target      `json:"target"`
	Workload    Workload    `json:"workload"`
	Steps       []Step      `json:"steps"`
	// AB links the files of one A/B run (ab.go); nil for pgscale run.
	AB        *AB        `json:"ab,omitempty"`
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"` // diagnosis.go
	// Pgbench is how pgscale pgbench was asked to report (pgbench.go);
	// nil for the other commands.
	Pgbench *Pgbench `json:"pgbench,omitempty"`
	// Coordination and Agents describe a run whose clients agents ran
	// (pgscale run --agents, agents.go); absent otherwise.
	Coordination *Coordination `json:"coordination,omitempty"`
	Agents       []Agent       `json:"agents,omitempty"`
}

// Environment is the machine the load generator ran on.
type Environment struct {
	Hostname   string `json:"hostname"`
	OS         string `json:"os"`
	Kernel     string `json:"kernel"`
	CPUModel   string `json:"cpu_model"`
	CPUs       int    `json:"cpus"`
	MemoryMB   int64  `json:"memory_mb"`
	GoVersion  string `json:"go_version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

// ClusterOwn are the settings pgscale gives every cluster it starts a
// value of its own (internal/target's ephemeral clusters): where it
// listens and keeps its files. They differ between any two clusters of a
// run, so they tell targets apart by nothing the reader chose.
var ClusterOwn = map[string]bool{
	"listen_addresses": true, "port": true, "unix_socket_directories": true,
	"data_directory": true, "hba_file": true, "ident_file": true, "config_file": true, "external_pid_file": true,
}

// Target is where the load went.
type Target struct {
	Kind          string            `json:"kind"`                // "ephemeral", "dsn", "pgbouncer" or "proxy"
	Name          string            `json:"name,omitempty"`      // A/B target name
	Description   string            `json:"description"`         // host, port, user, database; never a password
	BinDir        string            `json:"bin_dir,omitempty"`   // ephemeral: server binaries
	ServerVersion string            `json:"server_version"`      // server_version as the server reports it
	Settings      map[string]string `json:"settings"`            // every setting whose source is not the default
	Preloaded     []string          `json:"preloaded,omitempty"` // shared_preload_libraries
	Tmpfs         bool              `json:"tmpfs,omitempty"`     // ephemeral: data directory in memory
	// SameServerAs names, in an A/B run, the target whose server this
	// one's clients connected to, with SessionSettings set on every
	// connection: a same-cluster settings target, whose settings can all
	// be set per session. Empty for a target with a server of its own.
	SameServerAs    string            `json:"same_server_as,omitempty"`
	SessionSettings map[string]string `json:"session_settings,omitempty"`
	// Pooler is the pooler pgscale started in front of the server (kind
	// "pgbouncer" or "proxy"): the clients connected to it (Description), while
	// ServerVersion, Settings, BinDir and the probes are the server's.
	Pooler *Pooler `json:"pooler,omitempty"`
	// Valgrind is the instruction counter the server ran under (--count
	// instructions); absent otherwise.
	Valgrind *Valgrind `json:"valgrind,omitempty"`
	// Build is how the server was built from source (a src: target);
	// absent for a server pgscale did not build.
	Build *Build `json:"build,omitempty"`
	// Spec is the target as given (KIND:ARG, without its A/B name), its
	// paths absolute and passwords redacted: what pgscale history bisect
	// builds again at other commits. Absent in files written before
	// pgscale recorded it.
	Spec string `json:"spec,omitempty"`
}

// Build is a server pgscale built from source, as its build cache
// recorded it: what it was made from and how.
type Build struct {
	// Source is the source as given: PATH[@REV][+PATCH...]. Path is the
	// tree's absolute path, Rev the revision as given (empty: the tree
	// as it was on disk), Mode "commit", "worktree" or "dir".
	Source string `json:"source"`
	Path   string `json:"path"`
	Rev    string `json:"rev,omitempty"`
	Mode   string `json:"mode"`
	// Commit is the commit Rev resolved to (for a working tree the commit
	// it was checked out at; empty for a plain directory); Tree git's
	// hash of the tree built, before the patches.
	Commit string `json:"commit,omitempty"`
	Tree   string `json:"tree"`
	// Dirty says a working tree differed from its commit (uncommitted
	// changes were built).
	Dirty     bool         `json:"dirty,omitempty"`
	Patches   []BuildPatch `json:"patches,omitempty"`
	System    string       `json:"system"`    // "autoconf" or "meson"; "installed": a copy of the installed server, Path its bin directory
	Configure []string     `json:"configure"` // every argument, defaults included, prefix left out
	Compiler  string       `json:"compiler"`  // the C compiler's identity
	Key       string       `json:"key"`       // the build cache's key
	// Extensions are the extensions built against the server (ext=).
	Extensions []BuildExtension `json:"extensions,omitempty"`
	// Constants are compile-time constants read from the patched source
	// that the version does not tell (FP_LOCK_SLOTS_PER_BACKEND); a
	// constant the source does not define is absent.
	Constants map[string]int64 `json:"constants,omitempty"`
}

// FastPathSlots returns the build's FP_LOCK_SLOTS_PER_BACKEND, and whether
// its source defined it.
func (b *Build) FastPathSlots() (int, bool) {
	if b == nil {
		return 0, false
	}
	v, ok := b.Constants["FP_LOCK_SLOTS_PER_BACKEND"]
	return int(v), ok
}

// BuildPatch is one patch applied to a build's source, in order.
type BuildPatch struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// BuildExtension is an extension built into a server build.
type BuildExtension struct {
	Name    string       `json:"name"`
	Source  string       `json:"source"` // EXTPATH[@REV][+PATCH...]
	Commit  string       `json:"commit,omitempty"`
	Tree    string       `json:"tree"`
	Patches []BuildPatch `json:"patches,omitempty"`
	// Make are the arguments given to PGXS's make (make=), Run the build
	// command that replaced it (run=).
	Make []string `json:"make,omitempty"`
	Run  string   `json:"run,omitempty"`
	// Controls are the names CREATE EXTENSION takes.
	Controls []string `json:"controls,omitempty"`
}

// Valgrind is the tool that counted the server's instructions.
type Valgrind struct {
	Version string   `json:"version"` // "valgrind-3.19.0"
	Options []string `json:"options"` // valgrind's options, DIR for the cluster's directory
	ASLR    string   `json:"aslr"`    // whether address-space randomisation was on, and why
}

// Pooler is a connection pooler pgscale started in front of a server.
type Pooler struct {
	Program string `json:"program"` // "pgbouncer", or a proxy's program
	Version string `json:"version"`
	// Settings are its configuration as written: pgscale's defaults, then
	// the target's own.
	Settings map[string]string `json:"settings"`
	// Server describes the server it fronts (host, port, user, database);
	// ServerKind is "ephemeral" or "dsn".
	Server     string `json:"server"`
	ServerKind string `json:"server_kind"`
	// Of is, in an A/B run, the target whose server it fronts (targets,
	// comma-separated, for a proxy in front of several); empty when the
	// server is its own (pgscale run --pooler).
	Of string `json:"of,omitempty"`
	// Command is a proxy's command line as run, and Files the files it
	// read, by name, as written (kind "proxy"; passwords redacted).
	Command string            `json:"command,omitempty"`
	Files   map[string]string `json:"files,omitempty"`
	// Build is the proxy's own build, when its definition has one.
	Build *PoolerBuild `json:"build,omitempty"`
}

// PoolerBuild is the build of a proxy's program: the source as given,
// the commit and tree it resolved to, the build cache's key and the
// build command.
type PoolerBuild struct {
	Source  string `json:"source"`
	Commit  string `json:"commit,omitempty"`
	Tree    string `json:"tree"`
	Key     string `json:"key"`
	Command string `json:"command"`
}

// Script is one script of the workload, as run.
type Script struct {
	Name   string `json:"name"`
	Weight int    `json:"weight"`
	Source string `json:"source"`
	// Description is pgbench's name for it: "<builtin: TPC-B (sort of)>",
	// or the file name as given.
	Description string `json:"description,omitempty"`
	// SimpleProtocolLines are the lines of compound SQL commands (\;) sent
	// with the simple query protocol although -M is extended or prepared.
	SimpleProtocolLines []int `json:"simple_protocol_lines,omitempty"`
	// PrepareFallbacks are the SQL commands sent with the simple protocol
	// because, with the default protocol (prepared, not asked for), the
	// server refused to prepare them for their parameters' types, as
	// pgbench's default (simple) would have run them.
	PrepareFallbacks []PrepareFallback `json:"prepare_fallbacks,omitempty"`
}

// PrepareFallback is one command that could not be prepared for its
// parameters' types, and why.
type PrepareFallback struct {
	Line     int    `json:"line"`
	SQLState string `json:"sqlstate"`
	Message  string `json:"message"`
}

// Workload is what every client ran.
type Workload struct {
	Name            string            `json:"name"` // built-in name, or the script file names
	Scripts         []Script          `json:"scripts"`
	Defines         map[string]string `json:"defines,omitempty"`
	Scale           int               `json:"scale"`
	Protocol        string            `json:"protocol"`
	Connect         bool              `json:"connect_per_transaction,omitempty"`
	RateTPS         float64           `json:"rate_tps,omitempty"`
	LatencyLimitMs  float64           `json:"latency_limit_ms,omitempty"`
	MaxTries        int               `json:"max_tries"`
	DurationS       float64           `json:"duration_s,omitempty"`
	Transactions    int               `json:"transactions_per_client,omitempty"`
	WarmupS         float64           `json:"warmup_s,omitempty"`
	RandomSeed      uint64            `json:"random_seed"`
	IntervalS       float64           `json:"interval_s"`
	ContinueOnError bool              `json:"continue_on_error,omitempty"`
	// Threads is -j as given: the clients are dealt to this many threads
	// for pgbench's per-thread random streams; 0 is one per client.
	Threads int `json:"threads,omitempty"`
	// Partitions and PartitionMethod describe pgbench_accounts when a
	// built-in script read the scale from the data (pgbench reports them).
	Partitions      int    `json:"partitions,omitempty"`
	PartitionMethod string `json:"partition_method,omitempty"`
}

// Step is one client count of the sweep.
type Step struct {
	Clients int `json:"clients"`
	// Round is the 1-based round of an A/B run the step belongs to; 0
	// outside A/B runs.
	Round int    `json:"round,omitempty"`
	IO    string `json:"client_io"` // raw or netpoll client sockets
	// Colocated counts the clients whose thread followed its backend's CPU
	// (--colocate).
	Colocated int          `json:"colocated_clients,omitempty"`
	Complete  bool         `json:"complete"`
	Reason    string       `json:"incomplete_reason,omitempty"`
	Started   time.Time    `json:"started"` // start of the measured window
	ElapsedS  float64      `json:"elapsed_s"`
	Summary   Summary      `json:"summary"`
	Histogram string       `json:"latency_histogram"` // HdrHistogram V2 compressed base64, µs
	Intervals []Interval   `json:"intervals"`
	Scripts   []ScriptStat `json:"scripts,omitempty"`  // with several weighted scripts
	Commands  []Command    `json:"commands,omitempty"` // -r
	Errors    []Error      `json:"errors,omitempty"`
	// Probes is the server-side evidence gathered during the step (probes.go).
	Probes *Probes `json:"probes,omitempty"`
	// Disturbances are the disturbance windows run during the step (disturb.go).
	Disturbances []Disturbance `json:"disturbances,omitempty"`
	// Outages are the stretches in which the clients lost the server and
	// connected again: a restart (outage.go); none in most steps.
	Outages []Outage `json:"outages,omitempty"`
	// Agents are the agents that ran the step's clients, each with its
	// share (agents.go); absent when this process ran them all.
	Agents []StepAgent `json:"agents,omitempty"`
	// Costs are what the step cost outside the load generator, accounted
	// slice by slice in an A/B run in slices (where the probes do not
	// run); absent otherwise.
	Costs *Costs `json:"costs,omitempty"`
}

// Costs are what the target's server (and pooler) used over the counted
// parts of a step's slices, read from /proc at every slice edge: CPU and
// context switches, to divide by the step's transactions.
type Costs struct {
	// ServerCPUS is the on-CPU time of the server's processes
	// (schedstat), ServerUserS and ServerSysS its split into user and
	// kernel time (clock ticks: coarser, so they need not add up exactly).
	ServerCPUS  float64 `json:"server_cpu_s"`
	ServerUserS float64 `json:"server_user_s"`
	ServerSysS  float64 `json:"server_sys_s"`
	// ServerCtx counts the times the server's processes were scheduled in:
	// their context switches.
	ServerCtx int64 `json:"server_ctx"`
	// PoolerCPUS is the on-CPU time of a pooler's processes; absent
	// without one.
	PoolerCPUS *float64 `json:"pooler_cpu_s,omitempty"`
	// PoolerCtx counts the times the pooler's processes were scheduled
	// in; absent without one (and in files written before it was kept).
	PoolerCtx *int64 `json:"pooler_ctx,omitempty"`
	// HostStealShare is the machine's steal time over the same slices
	// (/proc/stat), as a share of their time on every CPU: time the
	// hypervisor gave other guests while this one wanted to run. The
	// server's CPU above leaves it out (the kernel charges a task only
	// what it ran); it says how loud the neighbours were.
	HostStealShare float64 `json:"host_steal_share,omitempty"`
}

// Summary is a step's headline figures.
type Summary struct {
	Transactions int64            `json:"transactions"`
	TPS          float64          `json:"tps"`
	Latency      Latency          `json:"latency"`
	Failed       int64            `json:"failed"`
	FailedByKind map[string]int64 `json:"failed_by_kind,omitempty"`
	Retried      int64            `json:"retried"`
	Retries      int64            `json:"retries"`
	Skipped      int64            `json:"skipped,omitempty"`
	Late         int64            `json:"late,omitempty"`
	LagMeanMs    float64          `json:"lag_mean_ms,omitempty"`
	LagMaxMs     float64          `json:"lag_max_ms,omitempty"`
	ConnectMs    float64          `json:"connect_ms"` // mean time to open a client's first connection
	// InitialConnectMs is the connection phase's wall time, from the first
	// attempt until every client was connected: pgbench's "initial
	// connection time". It is not part of the measured window.
	InitialConnectMs float64 `json:"initial_connection_ms,omitempty"`
	Connections      int64   `json:"connections,omitempty"`        // -C: connections opened
	ConnMeanMs       float64 `json:"connection_mean_ms,omitempty"` // -C: mean time to open one
	ClientCPU        CPU     `json:"client_cpu"`
	Speedup          float64 `json:"speedup"`    // tps / first step's tps
	Efficiency       float64 `json:"efficiency"` // speedup / (clients / first step's clients)
	Aborted          int     `json:"aborted_clients,omitempty"`
}

// Latency summarises a latency distribution in milliseconds: mean and
// standard deviation exact, percentiles from the HDR histogram (within
// 0.1 %).
type Latency struct {
	MeanMs   float64 `json:"mean_ms"`
	StddevMs float64 `json:"stddev_ms"`
	MinMs    float64 `json:"min_ms"`
	P50Ms    float64 `json:"p50_ms"`
	P90Ms    float64 `json:"p90_ms"`
	P99Ms    float64 `json:"p99_ms"`
	P999Ms   float64 `json:"p99_9_ms"`
	MaxMs    float64 `json:"max_ms"`
}

// CPU is the load generator's own CPU time during the measured window.
type CPU struct {
	UserS    float64 `json:"user_s"`
	SysS     float64 `json:"sys_s"`
	PerTxnUS float64 `json:"per_txn_us"` // (user+sys) / transactions
	Share    float64 `json:"share"`      // (user+sys) / (elapsed × CPUs)
}

// Interval is one point of the per-interval series.
type Interval struct {
	StartS       float64          `json:"t"` // seconds since the measured window began
	LengthS      float64          `json:"len_s"`
	Transactions int64            `json:"n"`
	TPS          float64          `json:"tps"`
	Latency      Latency          `json:"lat"`
	Failed       int64            `json:"failed"`
	FailedByKind map[string]int64 `json:"failed_by_kind,omitempty"`
	Retries      int64            `json:"retries,omitempty"`
	Skipped      int64            `json:"skipped,omitempty"`
	Late         int64            `json:"late,omitempty"`
	LagMeanMs    float64          `json:"lag_mean_ms,omitempty"`
	Histogram    string           `json:"hist"`
}

// ScriptStat is one weighted script's share of a step, as pgbench reports it.
type ScriptStat struct {
	Name         string           `json:"name"`
	Weight       int              `json:"weight"`
	Transactions int64            `json:"transactions"`
	TPS          float64          `json:"tps"`
	Failed       int64            `json:"failed"`
	FailedByKind map[string]int64 `json:"failed_by_kind,omitempty"`
	Retried      int64            `json:"retried,omitempty"`
	Retries      int64            `json:"retries,omitempty"`
	Skipped      int64            `json:"skipped,omitempty"`
	LatMeanMs    float64          `json:"lat_mean_ms"`
	LatStddevMs  float64          `json:"lat_stddev_ms"`
}

// Command is one script command's per-statement figures (pgbench -r).
type Command struct {
	Script string `json:"script"`
	// ScriptIndex is the script's position in workload.scripts (names
	// may repeat).
	ScriptIndex int    `json:"script_index,omitempty"`
	Line        int    `json:"line"`
	Text        string `json:"text"`
	// FirstLine is the command as pgbench's -r report shows it: an SQL
	// command's first line (at most 127 bytes), a meta-command as written.
	FirstLine string  `json:"first_line,omitempty"`
	Count     int64   `json:"count"`
	MeanMs    float64 `json:"mean_ms"`
	Failed    int64   `json:"failed"`
	Retries   int64   `json:"retries"`
}

// Error is one distinct error seen during a step.
type Error struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// SortErrors orders distinct errors as every list of them is shown: most
// frequent first, then by message.
func SortErrors(errs []Error) {
	sort.Slice(errs, func(i, j int) bool {
		if errs[i].Count != errs[j].Count {
			return errs[i].Count > errs[j].Count
		}
		return errs[i].Message < errs[j].Message
	})
}
