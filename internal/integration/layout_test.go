package integration_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/testenv"
)

// clusterDir is the directory of an ephemeral cluster whose socket a
// description names: "host=/tmp/pgscale-123 port=5432 ...".
func clusterDir(t *testing.T, description string) string {
	t.Helper()
	host, _, _ := strings.Cut(strings.TrimPrefix(description, "host="), " ")
	if !strings.Contains(host, "pgscale-") {
		t.Fatalf("description %q names no ephemeral cluster's socket directory", description)
	}
	return host
}

// serverUsing lists the processes whose command line names dir: a server
// (or anything) left running on it.
func serverUsing(dir string) []int {
	var out []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), dir) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			out = append(out, pid)
		}
	}
	return out
}

// Two bin: targets need clusters of their own, so with --reshuffle 2 the
// run re-creates them after every second round: each layout has new
// directories, the old ones are removed and nothing runs on them, the
// result files record the layout of every round, and the comparison rests
// on the layouts (and says so).
func TestABReshuffleRecreatesClusters(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	bin := cluster.BinDir
	dir := t.TempDir()
	out := filepath.Join(dir, "results")
	code, stdout := abCLI(t, nil, "ab", "--target", "a=bin:"+bin, "--target", "b=bin:"+bin, "-S", "-c", "1", "-T", "0.5", "--warmup", "0.2",
		"--rounds", "6", "--reshuffle", "2", "--out", out, "--verdict", filepath.Join(dir, "verdict.json"))
	if code != cli.ExitOK {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(stdout, "over 6 of 6 rounds on 3 cluster layouts, the clusters re-created every 2 rounds") ||
		!strings.Contains(stdout, "the interval rests on 3 layouts") {
		t.Errorf("the comparison does not say it rests on the layouts:\n%s", stdout)
	}
	var files []*result.File
	for _, n := range []string{"a", "b"} {
		f, err := result.Read(filepath.Join(out, n+".json"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	ab := files[0].AB
	if ab.Reshuffle != 2 || len(ab.Layouts) != 3 {
		t.Fatalf("reshuffle %d, %d layouts; want 2 and 3", ab.Reshuffle, len(ab.Layouts))
	}
	seen := map[string]string{}
	for i, l := range ab.Layouts {
		if l.Layout != i+1 || len(l.Rounds) != 2 || l.Rounds[0] != 2*i+1 || l.Rounds[1] != 2*i+2 {
			t.Errorf("layout %d: %+v; want rounds %d and %d", i+1, l, 2*i+1, 2*i+2)
		}
		if i > 0 && !(l.SetupS > 0) {
			t.Errorf("layout %d: setup took %v s; want the time it took", l.Layout, l.SetupS)
		}
		for _, n := range []string{"a", "b"} {
			d := clusterDir(t, l.Servers[n])
			if other, dup := seen[d]; dup {
				t.Errorf("layout %d, %s: directory %s was already %s's", l.Layout, n, d, other)
			}
			seen[d] = n + " in layout " + strconv.Itoa(l.Layout)
			if _, err := os.Stat(d); err == nil {
				t.Errorf("%s's cluster directory %s of layout %d is still there", n, d, l.Layout)
			}
			if left := serverUsing(d); len(left) > 0 {
				t.Errorf("processes %v still run on %s", left, d)
			}
		}
	}
	for _, f := range files {
		for _, s := range f.Steps {
			if want := (s.Round-1)/2 + 1; ab.LayoutOf(s.Round) != want {
				t.Errorf("%s round %d: layout %d, want %d", f.Target.Name, s.Round, ab.LayoutOf(s.Round), want)
			}
		}
		if f.Target.SameServerAs != "" {
			t.Errorf("%s: same_server_as %q for a bin: target", f.Target.Name, f.Target.SameServerAs)
		}
	}
	v := readVerdict(t, filepath.Join(dir, "verdict.json"))
	if v.Layouts != 3 || v.Reshuffle != 2 || measure(t, v, "tps@c=1").N != 3 {
		t.Errorf("verdict: %d layouts, reshuffle %d, tps n %d; want 3, 2, 3", v.Layouts, v.Reshuffle, measure(t, v, "tps@c=1").N)
	}
	// report reaches the same comparison from the files alone.
	printed := strings.TrimSuffix(stdout, "\nresults: "+out+", one file per target\n")
	if code, shown := abCLI(t, nil, "report", out); code != cli.ExitOK || shown != printed {
		t.Errorf("report: exit %d\n%s\nab printed:\n%s", code, shown, printed)
	}
}

// A settings target whose settings can be set per session runs on the
// baseline's cluster: one cluster, its settings as connection options,
// recorded in its file and said in the output; none is reshuffled. With
// --separate-clusters it gets a cluster of its own, and then the run is
// reshuffled.
func TestABSameClusterSettings(t *testing.T) {
	trackTime(t)
	testenv.Slow(t)
	out := filepath.Join(t.TempDir(), "results")
	stderr := &syncBuffer{}
	code, stdout := abCLI(t, stderr, "ab", "--target", "a=settings:", "--target", "b=settings:work_mem=8MB", "-S", "-c", "1", "-T", "0.5",
		"--warmup", "0.2", "--rounds", "4", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d", code)
	}
	a, err := result.Read(filepath.Join(out, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := result.Read(filepath.Join(out, "b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if b.Target.SameServerAs != "a" || b.Target.SessionSettings["work_mem"] != "8MB" || b.Target.Description != a.Target.Description {
		t.Errorf("b: same_server_as %q, session %v, description %q (a's %q)", b.Target.SameServerAs, b.Target.SessionSettings, b.Target.Description, a.Target.Description)
	}
	if b.Target.Settings["work_mem"] != "8MB" || a.Target.Settings["work_mem"] != "" {
		t.Errorf("recorded work_mem: a %q, b %q; want the default (absent) and 8MB", a.Target.Settings["work_mem"], b.Target.Settings["work_mem"])
	}
	if b.AB.Reshuffle != 0 || len(b.AB.Layouts) != 1 {
		t.Errorf("reshuffle %d with %d layouts on one cluster", b.AB.Reshuffle, len(b.AB.Layouts))
	}
	if !strings.Contains(stderr.String(), "target b: every setting can be set per session: its clients connect to a's cluster, work_mem=8MB set per session") ||
		strings.Count(stderr.String(), "starting an ephemeral PostgreSQL cluster") != 1 {
		t.Errorf("the run does not say b shares a's cluster, or started more than one:\n%s", stderr.String())
	}
	if !strings.Contains(stdout, "b ran on a's cluster (work_mem=8MB set per session)") {
		t.Errorf("the comparison does not say where b ran:\n%s", stdout)
	}

	out = filepath.Join(t.TempDir(), "results")
	code, stdout = abCLI(t, nil, "ab", "--target", "a=settings:", "--target", "b=settings:work_mem=8MB", "-S", "-c", "1", "-T", "0.5",
		"--warmup", "0.2", "--rounds", "4", "--separate-clusters", "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("--separate-clusters: exit %d", code)
	}
	b, err = result.Read(filepath.Join(out, "b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if b.Target.SameServerAs != "" || b.AB.Reshuffle != 2 || len(b.AB.Layouts) != 2 || !strings.Contains(stdout, "on 2 cluster layouts") {
		t.Errorf("--separate-clusters: same_server_as %q, reshuffle %d, %d layouts\n%s", b.Target.SameServerAs, b.AB.Reshuffle, len(b.AB.Layouts), stdout)
	}
}
