package doccheck_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/rhysd/actionlint"

	"github.com/pgscale/pgscale/internal/cli"
	"github.com/pgscale/pgscale/internal/target"
)

// The CI recipe of examples/ci (docs/ci.md) is kept true as the docs'
// commands are:
//
//   - the GitHub Actions workflow passes actionlint (as a library; with
//     shellcheck over its run: scripts where shellcheck is installed);
//   - the GitLab CI job parses (goccy/go-yaml), runs on merge requests,
//     keeps its caches whatever the job's outcome, shows exit 4 as a
//     warning and keeps the reports as artifacts;
//   - both run the gate script with a gate it knows, and every shell
//     script of the recipe parses (bash -n; the gate script passes
//     shellcheck where it is installed);
//   - every pgscale command of the gate script, its variables given the
//     values the CI files give, parses in the command tree as written
//     (--help appended, as TestDocCommands does), and the pooler
//     definitions the script writes are proxy definitions pgscale reads.
func TestCIRecipe(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "examples", "ci")
	script := filepath.Join(dir, "pgscale-gate.sh")
	workflow := filepath.Join(dir, "github", "pgscale-gate.yml")
	gitlab := filepath.Join(dir, "gitlab", "pgscale-gate.gitlab-ci.yml")

	t.Run("github", func(t *testing.T) {
		opts := &actionlint.LinterOptions{}
		if sc, err := exec.LookPath("shellcheck"); err == nil {
			opts.Shellcheck = sc
		} else {
			t.Log("shellcheck is not installed: actionlint checks the workflow without it")
		}
		var out bytes.Buffer
		l, err := actionlint.NewLinter(&out, opts)
		if err != nil {
			t.Fatal(err)
		}
		errs, err := l.LintFile(workflow, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range errs {
			t.Errorf("actionlint: %s:%d:%d: %s [%s]", filepath.Base(e.Filepath), e.Line, e.Column, e.Message, e.Kind)
		}
		var wf struct {
			Env  map[string]string `yaml:"env"`
			Jobs map[string]struct {
				Steps []struct {
					Run string `yaml:"run"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		readYAML(t, workflow, &wf)
		checkGate(t, wf.Env["GATE"])
		var runs []string
		for _, j := range wf.Jobs {
			for _, s := range j.Steps {
				if s.Run != "" {
					runs = append(runs, s.Run)
				}
			}
		}
		checkCallsGate(t, runs)
		for _, r := range runs {
			bashParses(t, "a run: step", regexp.MustCompile(`\$\{\{[^}]*\}\}`).ReplaceAllString(r, "x"))
		}
	})

	t.Run("gitlab", func(t *testing.T) {
		var job struct {
			Rules []struct {
				If string `yaml:"if"`
			} `yaml:"rules"`
			Variables map[string]string `yaml:"variables"`
			Cache     []struct {
				Key   string   `yaml:"key"`
				Paths []string `yaml:"paths"`
				When  string   `yaml:"when"`
			} `yaml:"cache"`
			Script       []string `yaml:"script"`
			AllowFailure struct {
				ExitCodes []int `yaml:"exit_codes"`
			} `yaml:"allow_failure"`
			Artifacts struct {
				When  string   `yaml:"when"`
				Paths []string `yaml:"paths"`
			} `yaml:"artifacts"`
		}
		var file map[string]yaml.RawMessage
		readYAML(t, gitlab, &file)
		raw, ok := file["pgscale-gate"]
		if !ok {
			t.Fatalf("%s has no job pgscale-gate", gitlab)
		}
		if err := yaml.Unmarshal(raw, &job); err != nil {
			t.Fatalf("the job: %v", err)
		}
		if len(job.Rules) == 0 || !strings.Contains(job.Rules[0].If, `"merge_request_event"`) {
			t.Errorf("the job does not run on merge requests: %+v", job.Rules)
		}
		checkGate(t, job.Variables["GATE"])
		if v := job.Variables["PGSCALE_ON_INCONCLUSIVE"]; !slices.Contains([]string{"pass", "fail", "warn"}, v) {
			t.Errorf("PGSCALE_ON_INCONCLUSIVE %q: pass, fail or warn", v)
		}
		var kept []string
		for _, c := range job.Cache {
			if c.When != "always" {
				t.Errorf("cache %s is kept only when the job succeeds: a regression would lose the history", c.Key)
			}
			kept = append(kept, c.Paths...)
		}
		if !slices.Contains(kept, ".pgscale/") || !strings.HasPrefix(job.Variables["HISTORY"], "$CI_PROJECT_DIR/.pgscale/") {
			t.Errorf("the history store (%s) is not in the cache %v", job.Variables["HISTORY"], kept)
		}
		if !slices.Equal(job.AllowFailure.ExitCodes, []int{4}) {
			t.Errorf("allow_failure exit codes %v: want [4], undecided shown as a warning", job.AllowFailure.ExitCodes)
		}
		if job.Artifacts.When != "always" || !slices.Contains(job.Artifacts.Paths, "pgscale-out/") {
			t.Errorf("artifacts %+v: the reports kept whatever the outcome", job.Artifacts)
		}
		checkCallsGate(t, job.Script)
		for _, s := range job.Script {
			bashParses(t, "a script entry", s)
		}
	})

	t.Run("script", func(t *testing.T) {
		b, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		bashParses(t, "pgscale-gate.sh", string(b))
		if sc, err := exec.LookPath("shellcheck"); err == nil {
			if out, err := exec.Command(sc, "-S", "info", script).CombinedOutput(); err != nil {
				t.Errorf("shellcheck pgscale-gate.sh: %v\n%s", err, out)
			}
		}
		if fi, err := os.Stat(script); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("pgscale-gate.sh is not executable (%v)", err)
		}
		cmds := scriptCommands(t, string(b))
		var subs []string
		for _, c := range cmds {
			subs = append(subs, c[0])
			var out, errb bytes.Buffer
			if code := cli.Main(append(slices.Clone(c), "--help"), &out, &errb); code != 0 || errb.Len() > 0 {
				t.Errorf("pgscale %s\ndoes not parse (exit %d): %s", shellJoin(c), code, strings.TrimSpace(errb.String()))
			}
		}
		for _, want := range []string{"build", "suite", "ab", "report"} {
			if !slices.Contains(subs, want) {
				t.Errorf("the script runs no pgscale %s (it runs %v): is the extraction broken?", want, subs)
			}
		}
		// The targets it gives are pgscale's to read: every NAME=SPEC of
		// its pgscale build and every --param NAME=SPEC that names one.
		var specs []string
		for _, c := range cmds {
			for i, a := range c {
				switch {
				case c[0] == "build" && i > 0 && strings.Contains(a, "=") && !strings.HasPrefix(a, "-"):
					specs = append(specs, a)
				case i > 0 && c[i-1] == "--param" && strings.Contains(a, ":"):
					specs = append(specs, a)
				}
			}
		}
		if len(specs) < 4 {
			t.Errorf("the script gives %d targets (%q): want the base and the head to pgscale build and to the suite", len(specs), specs)
		}
		for _, spec := range specs {
			if _, err := target.ParseSpec(spec); err != nil {
				t.Errorf("the target %s does not parse: %v", spec, err)
			}
		}
	})
}

// gateValues are the values of the gate script's variables as the CI
// files give them, for parsing its commands.
var gateValues = map[string]string{
	"out": "pgscale-out", "history": ".pgscale/history.db", "transactions": "300", "inconclusive": "inconclusive",
	"label": "pr-7", "results": "pgscale-out/bundle",
	"BASE_DIR": "/ci/base", "HEAD_DIR": "/ci/head", "BASE_SHA": strings.Repeat("a", 40), "HEAD_SHA": strings.Repeat("b", 40),
	"SETUP": "bench/setup.sql", "QUERY": "bench/query.sql", "ROUNDS": "4", "BOUND": "+1%",
	"PGSCALE_ARGS": "--rounds 3",
}

// scriptCommands are the pgscale commands of a shell script, `\`
// continuations joined, each past an `if !` and before a `||`, its
// variables ($v, ${v}, ${v:-default}) given gateValues.
func scriptCommands(t *testing.T, src string) [][]string {
	t.Helper()
	vars := regexp.MustCompile(`\$\{([A-Za-z_]+)(:-[^}]*)?\}|\$([A-Za-z_]+)`)
	var out [][]string
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, "\\") + " " + strings.TrimSpace(lines[i])
		}
		words, err := shellSplit(strings.TrimSpace(l))
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		for _, c := range splitCommands(words) {
			w := c.words
			for len(w) > 0 && (w[0] == "if" || w[0] == "!") {
				w = w[1:]
			}
			if len(w) < 2 || w[0] != "pgscale" {
				continue
			}
			if k := slices.Index(w, "||"); k >= 0 {
				w = w[:k]
			}
			var args []string
			for _, a := range w[1:] {
				if strings.HasPrefix(a, "${more[@]") { // PGSCALE_ARGS, split at spaces
					args = append(args, strings.Fields(gateValues["PGSCALE_ARGS"])...)
					continue
				}
				args = append(args, vars.ReplaceAllStringFunc(a, func(v string) string {
					m := vars.FindStringSubmatch(v)
					name := m[1] + m[3]
					val, ok := gateValues[name]
					if !ok {
						t.Errorf("%s: the variable %s has no value in gateValues", a, name)
					}
					return val
				}))
			}
			out = append(out, args)
		}
	}
	return out
}

// checkGate checks that a CI file asks for a gate the script knows.
func checkGate(t *testing.T, gate string) {
	t.Helper()
	if gate != "pooler" && gate != "extension" {
		t.Errorf("GATE %q: pooler or extension", gate)
	}
}

// checkCallsGate checks that a CI file's scripts run the gate script with
// its GATE.
func checkCallsGate(t *testing.T, scripts []string) {
	t.Helper()
	for _, s := range scripts {
		if regexp.MustCompile(`pgscale-gate\.sh "\$GATE"`).MatchString(s) {
			return
		}
	}
	t.Errorf("no script runs pgscale-gate.sh \"$GATE\"")
}

// bashParses checks a shell script's syntax with bash -n.
func bashParses(t *testing.T, what, src string) {
	t.Helper()
	cmd := exec.Command("bash", "-n")
	cmd.Stdin = strings.NewReader(src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s does not parse: %v\n%s\n%s", what, err, out, src)
	}
}

// readYAML reads a YAML file into v.
func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatal(fmt.Errorf("%s: %w", path, err))
	}
}
