package probe

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/proc"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/symtab"
	"github.com/pgscale/pgscale/internal/syncio"
)

// profileProbe records the server's processes with
// `perf record -e cpu-clock -F 99 -g` during each step (a software clock,
// so it works without hardware counters; frame-pointer call chains) and
// turns `perf script` into a pprof profile labelled by pid, backend type and
// step: `go tool pprof -http` shows it as a flame graph, -diff_base
// compares two steps or two targets.
type profileProbe struct {
	perf string
	cat  string // perf record's workload (startPerf), its path with links resolved
	hz   int    // samples a second of CPU
	dir  string
	proc *procProbe

	tmp         string
	record      *proc.Process // perf record, while it runs
	stop        *os.File      // the write end of its workload's input, while it runs
	stderr      syncio.Buffer
	lastExit    string // how perf record ended
	data        string
	kinds       map[int]string
	lastPerfCPU time.Duration
	loopErr     error
	// syms names what perf could not, and says where each object's
	// names came from.
	syms objectSymbols
	// attached is when perf record had attached to every process,
	// recorded how long it then recorded until the window's last
	// snapshots.
	attached time.Time
	recorded time.Duration
}

func newProfileProbe(ctx context.Context, cfg Config, pp *procProbe) (*profileProbe, error) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return nil, errors.New("perf is not installed (Debian: apt-get install linux-perf)")
	}
	if out, err := proc.Output(ctx, proc.Spec{Name: "perf", Path: perf, Args: []string{"--version"}}); err != nil {
		return nil, fmt.Errorf("perf does not run: %v: %s", err, strings.TrimSpace(out))
	}
	cat, err := exec.LookPath("cat")
	if err == nil {
		cat, err = filepath.EvalSymlinks(cat)
	}
	if err != nil {
		return nil, fmt.Errorf("perf record's workload, cat, is not found: %v", err)
	}
	dir := cfg.ProfileDir
	if dir == "" {
		dir = "profiles"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("profile directory: %w", err)
	}
	return &profileProbe{perf: perf, cat: cat, hz: defaultProfileFrequency, dir: dir, proc: pp}, nil
}

func (p *profileProbe) name() string    { return probeid.Profile.Name }
func (p *profileProbe) backends() []int { return nil }

func (p *profileProbe) close() {
	if p.record != nil {
		p.stop.Close()
		p.record.Stop()
		p.record, p.stop = nil, nil
	}
	if p.tmp != "" {
		os.RemoveAll(p.tmp)
		p.tmp = ""
	}
}

// serverProcesses lists the postmaster and its children with their kinds.
func (p *profileProbe) serverProcesses() map[int]string {
	m := map[int]string{}
	procs, _, err := p.proc.candidates()
	if err != nil {
		return m
	}
	probes := p.proc.probePIDs()
	for _, pr := range procs {
		st, err := pr.Stat()
		if err != nil {
			continue
		}
		switch {
		case st.PID == p.proc.serverPID:
			m[st.PID] = "postmaster"
		case st.PPID == p.proc.serverPID:
			kind := KindBackground
			if cl, err := pr.CmdLine(); err == nil {
				kind = backendKind(strings.Join(cl, " "))
				if kind == KindBackground && len(cl) > 0 {
					kind = strings.TrimPrefix(strings.Join(cl, " "), "postgres: ")
				}
			}
			if _, ok := probes[st.PID]; ok {
				kind = KindProbe
			}
			m[st.PID] = kind
		}
	}
	return m
}

func (p *profileProbe) begin(ctx context.Context, st *stepState) (func(<-chan struct{}), error) {
	if p.tmp == "" {
		var err error
		if p.tmp, err = os.MkdirTemp("", "pgscale-perf-"); err != nil {
			return nil, err
		}
	}
	p.data = filepath.Join(p.tmp, fmt.Sprintf("step-%d.data", st.info.Index+1))
	// A backend listed may exit before perf attaches to it (the connection
	// that vacuumed before the step), and perf then gives up at once: list
	// again and retry.
	var err error
	for try := 0; try < 3; try++ {
		if err = p.startPerf(); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	p.loopErr = nil
	// Backends forked during the step are classified while they live.
	times := snapshotTimes(st.window, st.info.Duration, []float64{0.5}, defaultSnapshotEveryNoT)
	return func(stop <-chan struct{}) {
		every(ctx, times, stop, func() error {
			for pid, k := range p.serverProcesses() {
				p.kinds[pid] = k
			}
			return nil
		}, &p.loopErr)
	}, nil
}

// startPerf lists the server's processes and starts perf record on them
// with a workload of its own, cat reading a pipe this probe holds: perf
// record forks the workload, opens and enables its events, synthesizes
// what the processes have mapped, and only then lets the workload exec.
// So cat running is the handshake that perf records, and closing the pipe
// (capture) ends cat, after which perf writes its file and exits 0, as
// it does when any workload ends. A SIGINT instead raced perf's start on a
// loaded machine: one that came while perf was still synthesizing ended
// it with a file of 0 samples, or with its header unwritten (perf script
// then exits 255: "Was the 'perf record' command properly terminated?").
// perf's --control descriptor would be another handshake, but perf 6.1
// fails with it on -p ("Thread and evlist pollfd index mismatch").
func (p *profileProbe) startPerf() error {
	p.kinds = p.serverProcesses()
	var pids []string
	for pid := range p.kinds {
		pids = append(pids, strconv.Itoa(pid))
	}
	if len(pids) == 0 {
		return errors.New("no server process to profile")
	}
	sort.Strings(pids)
	stdin, stop, err := os.Pipe()
	if err != nil {
		return err
	}
	defer stdin.Close() // perf's child has its own copy
	// -p follows the listed processes and, by inheritance, the backends
	// the postmaster forks after the start.
	p.stderr.Reset()
	rec, err := proc.Start(proc.Spec{Name: "perf record", Path: p.perf, Args: []string{"record", "-e", "cpu-clock", "-F", strconv.Itoa(p.hz), "-g",
		"-p", strings.Join(pids, ","), "-o", p.data,
		// Build ids are collected at exit by reading every mapped file:
		// that doubles perf's CPU, and perf script symbolises from the
		// files on this host anyway.
		"--no-buildid", "--no-buildid-cache", "--", p.cat},
		Stdin: stdin, Output: &p.stderr})
	if err != nil {
		stop.Close()
		return err
	}
	deadline := time.Now().Add(perfStartTimeout)
	for {
		select {
		case <-rec.Exited():
			stop.Close()
			return fmt.Errorf("perf record exited at once (%v): %s", rec.ExitError(), perfError(p.stderr.String()))
		case <-time.After(20 * time.Millisecond):
		}
		if workloadRuns(rec.PID(), p.cat) {
			p.record, p.stop, p.attached = rec, stop, time.Now()
			return nil
		}
		if time.Now().After(deadline) {
			stop.Close()
			rec.Kill()
			return fmt.Errorf("perf record did not start recording within %v (the machine's load: %s): %s", perfStartTimeout, loadAverage(), perfError(p.stderr.String()))
		}
	}
}

// workloadRuns says whether perf record (pid perf) has started its
// workload: a child of it that is running the program workload.
func workloadRuns(perf int, workload string) bool {
	if perf == 0 {
		return false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == perf {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(perf) {
			continue
		}
		if exe, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && exe == workload {
			return true
		}
	}
	return false
}

// loadAverage is the machine's load average over the last minute, as
// /proc/loadavg says it ("?" where it cannot be read).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// perfError is the line of perf's standard error that says what went
// wrong: the line after its last "Error:" heading (perf ends such a
// message with a hint: "/bin/dmesg | grep -i perf may provide additional
// information."), else its last line, leaving out perf record's progress
// lines ("[ perf record: Woken up 1 times to write data ]"); "perf said
// nothing" when there is none.
func perfError(stderr string) string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "[ perf record:") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "perf said nothing on its standard error"
	}
	line := lines[len(lines)-1]
	for i := len(lines) - 2; i >= 0; i-- {
		if lines[i] == "Error:" {
			line = lines[i+1]
			break
		}
	}
	if paranoid := perfParanoia(strings.Join(lines, "\n")); paranoid != "" {
		return line + " (" + paranoid + ")"
	}
	return line
}

// perfParanoia explains a refusal of perf_event_open by the kernel's
// setting, when perf's message is about it and this process is not root.
func perfParanoia(text string) string {
	if os.Geteuid() == 0 || !strings.Contains(text, "perf_event_paranoid") && !strings.Contains(strings.ToLower(text), "permission") {
		return ""
	}
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		return ""
	}
	return fmt.Sprintf("kernel.perf_event_paranoid is %s: profiling the server's processes takes root, CAP_PERFMON, or sysctl kernel.perf_event_paranoid=1 and the server running as this user", strings.TrimSpace(string(b)))
}

func (p *profileProbe) capture(context.Context, *stepState) error {
	if p.record == nil {
		return errors.New("perf record did not start")
	}
	rec := p.record
	p.record = nil
	p.recorded = time.Since(p.attached)
	// The end of cat's input ends the workload, and perf with it.
	p.stop.Close()
	p.stop = nil
	select {
	case <-rec.Exited():
	case <-time.After(30 * time.Second):
		rec.Kill()
		return fmt.Errorf("perf record did not stop within 30 s of its workload's end (the machine's load: %s): %s", loadAverage(), perfError(p.stderr.String()))
	}
	if st := rec.State(); st != nil {
		p.lastPerfCPU = st.UserTime() + st.SystemTime()
		p.lastExit = st.String()
		if !st.Success() {
			return fmt.Errorf("perf record ended with %s: %s", st, perfError(p.stderr.String()))
		}
	}
	if _, err := os.Stat(p.data); err != nil {
		return fmt.Errorf("perf record wrote nothing: %s", perfError(p.stderr.String()))
	}
	return nil
}

func (p *profileProbe) report(ctx context.Context, st *stepState, out *result.Probes) error {
	defer os.Remove(p.data)
	stdout, w := io.Pipe()
	var serr syncio.Buffer
	done := make(chan error, 1)
	go func() {
		err := proc.Run(ctx, proc.Spec{Name: "perf script", Path: p.perf, Args: []string{"script", "-i", p.data, "-F", "comm,pid,tid,period,ip,sym,dso"},
			Output: w, Stderr: &serr})
		w.Close()
		done <- err
	}()
	label := fmt.Sprintf("%d clients", st.info.Clients)
	prof, perr := ParsePerfScript(stdout, p.kinds, label, &p.syms.names)
	io.Copy(io.Discard, stdout) // what the parser left, for perf script to end
	if err := <-done; err != nil {
		return fmt.Errorf("perf script: %v: %s (perf record %s)", err, perfError(serr.String()), p.lastExit)
	}
	if perr != nil {
		return perr
	}
	name := filepath.Join(p.dir, profileName(st.info))
	if err := writeProfile(name, prof); err != nil {
		return err
	}
	out.SetProfile(summarize(prof, name, &p.syms))
	out.Profile().Hz = p.hz
	out.Profile().RecordedS = p.recorded.Seconds()
	return nil
}

// writeProfile writes prof to the file name (gzipped pprof).
func writeProfile(name string, prof *profile.Profile) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := prof.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	return f.Close()
}

// profileName names a step's pprof file: by its place in the sweep and its
// clients, and in an A/B run by its round too, so that no step's file
// overwrites another's. The targets of an A/B run each have a directory
// of their own (rig.Rig.ProfileDirs).
func profileName(s observe.StepInfo) string {
	if s.Round > 0 {
		return fmt.Sprintf("round-%d-step-%d-c%d.pb.gz", s.Round, s.Index+1, s.Clients)
	}
	return fmt.Sprintf("step-%d-c%d.pb.gz", s.Index+1, s.Clients)
}

// perfStartTimeout bounds perf record's start-up, which a loaded machine
// slows down.
const perfStartTimeout = 20 * time.Second

// ParsePerfScript reads `perf script -F comm,pid,tid,period,ip,sym,dso`
// output (with call chains) into a pprof CPU profile. kinds names each
// pid's process kind (its backend type); step labels every sample. A frame
// perf could not name ([unknown]) is named from names where its file's
// debug file, symbol table or dynamic symbols name it (names nil: not),
// and otherwise by its file, "[postgres]".
func ParsePerfScript(r io.Reader, kinds map[int]string, step string, names *symtab.Cache) (*profile.Profile, error) {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Comments:   []string{"perf record -e cpu-clock -g, converted by pgscale"},
	}
	mappings := map[string]*profile.Mapping{}
	funcs := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	location := func(sym, dso string) *profile.Location {
		if sym == "[unknown]" || sym == "" {
			sym = "[" + filepath.Base(dso) + "]"
		}
		key := sym + "\x00" + dso
		if l, ok := locs[key]; ok {
			return l
		}
		m := mappings[dso]
		if m == nil {
			m = &profile.Mapping{ID: uint64(len(mappings) + 1), File: dso}
			mappings[dso] = m
			p.Mapping = append(p.Mapping, m)
		}
		f := funcs[sym]
		if f == nil {
			f = &profile.Function{ID: uint64(len(funcs) + 1), Name: sym, SystemName: sym}
			funcs[sym] = f
			p.Function = append(p.Function, f)
		}
		l := &profile.Location{ID: uint64(len(locs) + 1), Mapping: m, Line: []profile.Line{{Function: f}}}
		locs[key] = l
		p.Location = append(p.Location, l)
		return l
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur *profile.Sample
	flush := func() {
		if cur != nil {
			p.Sample = append(p.Sample, cur)
			cur = nil
		}
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			flush()
			f := strings.Fields(line)
			if len(f) < 3 {
				return nil, fmt.Errorf("perf script: unexpected line %q", line)
			}
			period, err1 := strconv.ParseInt(f[len(f)-1], 10, 64)
			pidS, _, _ := strings.Cut(f[len(f)-2], "/")
			pid, err2 := strconv.Atoi(pidS)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("perf script: unexpected line %q", line)
			}
			if p.Period == 0 {
				p.Period = period
			}
			kind := kinds[pid]
			if kind == "" {
				kind = "exited"
			}
			cur = &profile.Sample{
				Value:    []int64{1, period},
				Label:    map[string][]string{"backend_type": {kind}, "comm": {strings.Join(f[:len(f)-2], " ")}, "step": {step}},
				NumLabel: map[string][]int64{"pid": {int64(pid)}},
			}
			continue
		}
		if cur == nil {
			continue
		}
		// "\t addr sym (dso)": addr is the file's virtual address for a
		// frame in a file.
		s := strings.TrimSpace(line)
		addr, rest, _ := strings.Cut(s, " ")
		rest = strings.TrimSpace(rest)
		dso := ""
		if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
			dso = rest[i+2 : len(rest)-1]
			rest = rest[:i]
		}
		sym := strings.TrimSpace(rest)
		if (sym == "[unknown]" || sym == "") && names != nil && strings.HasPrefix(dso, "/") {
			if a, err := symtab.ParseAddr(addr); err == nil {
				if n, ok := names.Name(dso, a); ok {
					sym = n
				}
			}
		}
		cur.Location = append(cur.Location, location(sym, dso))
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return p, p.CheckValid()
}

func init() { register(profileDef) }

var profileDef = def{
	id: probeid.Profile, flag: "profile", evidence: "record a CPU profile of the server with perf for each step (pprof files)",
	flags: func(fs *pflag.FlagSet, o *Options) {
		fs.StringVar(&o.ProfileDir, "profile-dir", "", "where --profile writes its pprof files (default results/profile-<UTC time>; for ab, profiles/ in the run's directory; ab puts each target's in a directory of its own under it)")
	},
	open: func(ctx context.Context, cfg Config, s *Set) (probe, error) {
		if s.proc == nil || s.proc.serverPID == 0 {
			return nil, errors.New("needs the server's processes on this host (process accounting)")
		}
		p, err := newProfileProbe(ctx, cfg, s.proc)
		if err != nil {
			return nil, err
		}
		return p, nil
	},
}
