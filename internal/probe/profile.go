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
	"syscall"
	"time"

	"github.com/google/pprof/profile"
	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/observe"
	"github.com/pgscale/pgscale/internal/probeopt"
	"github.com/pgscale/pgscale/internal/proc"
	"github.com/pgscale/pgscale/internal/result"
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
	dir  string
	proc *procProbe

	tmp         string
	record      *proc.Process // perf record, while it runs
	stderr      syncio.Buffer
	lastExit    string // how perf record ended
	data        string
	kinds       map[int]string
	lastPerfCPU time.Duration
	loopErr     error
}

func newProfileProbe(ctx context.Context, cfg Config, pp *procProbe) (*profileProbe, error) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return nil, errors.New("perf is not installed (Debian: apt-get install linux-perf)")
	}
	if out, err := proc.Output(ctx, proc.Spec{Name: "perf", Path: perf, Args: []string{"--version"}}); err != nil {
		return nil, fmt.Errorf("perf does not run: %v: %s", err, strings.TrimSpace(out))
	}
	dir := cfg.ProfileDir
	if dir == "" {
		dir = "profiles"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("profile directory: %w", err)
	}
	return &profileProbe{perf: perf, dir: dir, proc: pp}, nil
}

func (p *profileProbe) name() string    { return NameProfile }
func (p *profileProbe) backends() []int { return nil }

func (p *profileProbe) close() {
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

// startPerf lists the server's processes, starts perf record on them and
// waits until perf catches SIGINT and has an event open per process: a
// SIGINT during its start-up would kill it before it writes its file, or
// end it before it samples anything (both seen on a loaded machine). perf's --control descriptor would be the clean
// handshake, but perf 6.1 fails with it on -p ("Thread and evlist pollfd
// index mismatch").
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
	// -p follows the listed processes and, by inheritance, the backends
	// the postmaster forks after the start.
	p.stderr.Reset()
	rec, err := proc.Start(proc.Spec{Name: "perf record", Path: p.perf, Args: []string{"record", "-e", "cpu-clock", "-F", strconv.Itoa(defaultProfileFrequency), "-g",
		"-p", strings.Join(pids, ","), "-o", p.data,
		// Build ids are collected at exit by reading every mapped file:
		// that doubles perf's CPU, and perf script symbolises from the
		// files on this host anyway.
		"--no-buildid", "--no-buildid-cache"},
		Output: &p.stderr})
	if err != nil {
		return err
	}
	pid := rec.PID()
	deadline := time.Now().Add(perfStartTimeout)
	for {
		select {
		case <-rec.Exited():
			return fmt.Errorf("perf record exited at once (%v): %s", rec.ExitError(), lastLine(p.stderr.String()))
		case <-time.After(10 * time.Millisecond):
		}
		if catchesSIGINT(pid) && perfEvents(pid) >= len(pids) {
			// A little more, for perf to attach: a listed backend that
			// is gone makes it exit here.
			select {
			case <-rec.Exited():
				return fmt.Errorf("perf record exited at once (%v): %s", rec.ExitError(), lastLine(p.stderr.String()))
			case <-time.After(perfSettle):
			}
			p.record = rec
			return nil
		}
		if time.Now().After(deadline) {
			rec.Kill()
			return fmt.Errorf("perf record did not start within %v: %s", perfStartTimeout, lastLine(p.stderr.String()))
		}
	}
}

// perfEvents counts the perf events process pid has open.
func perfEvents(pid int) int {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && l == "anon_inode:[perf_event]" {
			n++
		}
	}
	return n
}

// catchesSIGINT says whether process pid has a SIGINT handler installed,
// from the SigCgt mask of /proc/PID/status.
func catchesSIGINT(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(int(syscall.SIGINT)-1)) != 0
		}
	}
	return false
}

func (p *profileProbe) capture(context.Context, *stepState) error {
	if p.record == nil {
		return errors.New("perf record did not start")
	}
	rec := p.record
	p.record = nil
	_ = rec.Signal(syscall.SIGINT)
	select {
	case <-rec.Exited():
	case <-time.After(30 * time.Second):
		rec.Kill()
		return errors.New("perf record did not stop within 30 s")
	}
	if st := rec.State(); st != nil {
		p.lastPerfCPU = st.UserTime() + st.SystemTime()
		p.lastExit = st.String()
	}
	if _, err := os.Stat(p.data); err != nil {
		return fmt.Errorf("perf record wrote nothing: %s", lastLine(p.stderr.String()))
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
	prof, perr := ParsePerfScript(stdout, p.kinds, label)
	io.Copy(io.Discard, stdout) // what the parser left, for perf script to end
	if err := <-done; err != nil {
		return fmt.Errorf("perf script: %v: %s (perf record: %s: %s)", err, lastLine(serr.String()), p.lastExit, lastLine(p.stderr.String()))
	}
	if perr != nil {
		return perr
	}
	name := filepath.Join(p.dir, profileName(st.info))
	if err := writeProfile(name, prof); err != nil {
		return err
	}
	out.SetProfile(summarize(prof, name))
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
// of their own (plan).
func profileName(s observe.StepInfo) string {
	if s.Round > 0 {
		return fmt.Sprintf("round-%d-step-%d-c%d.pb.gz", s.Round, s.Index+1, s.Clients)
	}
	return fmt.Sprintf("step-%d-c%d.pb.gz", s.Index+1, s.Clients)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// perfStartTimeout bounds perf record's start-up, which a loaded machine
// slows down; perfSettle is how long it must then keep running to count as
// attached.
const (
	perfStartTimeout = 20 * time.Second
	perfSettle       = 100 * time.Millisecond
)

// ParsePerfScript reads `perf script -F comm,pid,tid,period,ip,sym,dso`
// output (with call chains) into a pprof CPU profile. kinds names each
// pid's process kind (its backend type); step labels every sample.
func ParsePerfScript(r io.Reader, kinds map[int]string, step string) (*profile.Profile, error) {
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
		// "\t addr sym (dso)"
		s := strings.TrimSpace(line)
		_, rest, _ := strings.Cut(s, " ")
		rest = strings.TrimSpace(rest)
		dso := ""
		if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
			dso = rest[i+2 : len(rest)-1]
			rest = rest[:i]
		}
		cur.Location = append(cur.Location, location(strings.TrimSpace(rest), dso))
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return p, p.CheckValid()
}

// summarize keeps the profile's top functions for the result file.
func summarize(prof *profile.Profile, file string) *result.Profile {
	self, total := map[string]int64{}, map[string]int64{}
	var n int64
	for _, s := range prof.Sample {
		c := s.Value[0]
		n += c
		seen := map[string]bool{}
		for i, l := range s.Location {
			name := l.Line[0].Function.Name
			if i == 0 {
				self[name] += c
			}
			if !seen[name] {
				seen[name] = true
				total[name] += c
			}
		}
	}
	out := &result.Profile{File: file, Samples: n}
	for name, c := range self {
		out.Top = append(out.Top, result.ProfileFunc{Function: name, Self: c, Total: total[name]})
	}
	sort.Slice(out.Top, func(i, j int) bool {
		if out.Top[i].Self != out.Top[j].Self {
			return out.Top[i].Self > out.Top[j].Self
		}
		return out.Top[i].Function < out.Top[j].Function
	})
	if len(out.Top) > 15 {
		out.Top = out.Top[:15]
	}
	return out
}

// NameProfile names the CPU-profile probe (--profile, perf) in options and
// result files.
const NameProfile = probeopt.NameProfile

func init() { register(profileDef) }

var profileDef = def{
	name: NameProfile, flag: "profile", evidence: "record a CPU profile of the server with perf for each step (pprof files)",
	flags: func(fs *pflag.FlagSet, o *Options) {
		fs.StringVar(&o.ProfileDir, "profile-dir", "", "where --profile writes its pprof files (default results/profile-<UTC time>; for ab, profiles/ in the run's directory; ab puts each target's in a directory of its own under it)")
	},
	rank: 60,
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
