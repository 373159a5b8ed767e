package target

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/goccy/go-yaml"

	proxyexamples "github.com/pgscale/pgscale/examples/proxy"
	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/secret"
	"github.com/pgscale/pgscale/internal/usage"
	"github.com/pgscale/pgscale/internal/watch"
)

// Proxy is any pooler or proxy, started by its command line in front of
// other targets' servers: NAME=proxy:FILE.yaml[,of=NAME...], the file
// holding its definition (command, files, of, ready...), or the
// definition itself as a JSON object (a suite file's target map).
const ProxyKind Kind = "proxy"

// maxFronts is how many servers one proxy may stand in front of.
const maxFronts = 64

var proxyKind = kind{
	name: ProxyKind, form: "proxy:FILE.yaml", fronts: maxFronts, counts: true, builds: true,
	help: func(Words) string {
		return "any pooler or proxy, started by pgscale in front of target NAME's server (of=NAME, repeated for several; " +
			"by default the first target that is not a pooler) from the definition in FILE.yaml: its command line and the files it reads, " +
			"templates of {{dir}}, {{port}} and {{upstream.host}}, {{upstream.port}}... (docs/poolers.md); its processes are accounted as the pooler"
	},
	parse:     parseProxyArg,
	split:     cutObject,
	def:       parseProxyDef,
	defaultOf: func(a Arg) []string { return a.(ProxyArg).Of },
}

// ProxyArg is a proxy target's definition, read from File (or given
// inline, a JSON object, in Inline).
type ProxyArg struct {
	File   string // the file as given; empty for an inline definition
	Inline string // the definition as given inline
	Def    ProxyDef
	// Of names the targets it fronts when the spec's of= does not: the
	// definition's of:.
	Of []string
	// ServerConnections is how many connections it may open to each
	// server (server_connections:); 0: one per client and ten more.
	ServerConnections int
}

// String returns the file, or the inline definition with any password
// redacted.
func (a ProxyArg) String() string {
	if a.File != "" {
		return a.File
	}
	return secret.Redact(a.Inline)
}

// proxyYAML is a proxy definition as written.
type proxyYAML struct {
	Program           string        `yaml:"program" json:"program,omitempty"`
	Command           string        `yaml:"command" json:"command"`
	Files             yaml.MapSlice `yaml:"files" json:"files,omitempty"`
	Connect           string        `yaml:"connect" json:"connect,omitempty"`
	Ready             string        `yaml:"ready" json:"ready,omitempty"`
	Stop              string        `yaml:"stop" json:"stop,omitempty"`
	Of                any           `yaml:"of" json:"of,omitempty"`
	Build             *buildYAML    `yaml:"build" json:"build,omitempty"`
	ServerConnections int           `yaml:"server_connections" json:"server_connections,omitempty"`
	Admin             *adminYAML    `yaml:"admin" json:"admin,omitempty"`
	ReadOnly          bool          `yaml:"read_only" json:"read_only,omitempty"`
	Shards            yaml.MapSlice `yaml:"shards" json:"shards,omitempty"`
}

// adminYAML is a proxy's admin console as written: connection keywords
// added to where the clients connect, and the commands with their
// columns' pool figures.
type adminYAML struct {
	Connect  string `yaml:"connect" json:"connect"`
	Commands []struct {
		Command string            `yaml:"command" json:"command"`
		Pool    []string          `yaml:"pool" json:"pool,omitempty"`
		Columns map[string]string `yaml:"columns" json:"columns,omitempty"`
		Count   map[string]string `yaml:"count" json:"count,omitempty"`
	} `yaml:"commands" json:"commands"`
}

// Brief shortens a target spec for a line of text: a proxy's inline
// definition becomes its program's name ("b=proxy:{pgbouncer ...}").
func Brief(spec string) string {
	name, rest, _ := strings.Cut(spec, "=")
	obj, tail, err := cutObject(strings.TrimPrefix(rest, string(ProxyKind)+":"))
	if !strings.HasPrefix(rest, string(ProxyKind)+":{") || err != nil || obj == "" {
		return secret.Redact(spec)
	}
	var y struct {
		Program string `json:"program"`
		Command string `json:"command"`
	}
	_ = json.Unmarshal([]byte(obj), &y)
	if y.Program == "" {
		y.Program = programName(y.Command)
	}
	out := name + "=proxy:{" + y.Program + " ...}"
	if tail != "" {
		out += "," + tail
	}
	return out
}

// buildYAML is a proxy's build: as written: the source, the command, what
// to keep; or the command alone, written as a string, when the source is
// the definition's directory as it is.
type buildYAML struct {
	Source string `yaml:"source" json:"source"`
	Run    string `yaml:"run" json:"run"`
	Keep   string `yaml:"keep" json:"keep,omitempty"`
}

func parseProxyArg(arg string) (Arg, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return nil, errors.New("proxy: needs the file holding its definition (command, files, of...): proxy:FILE.yaml")
	}
	if strings.HasPrefix(arg, "{") {
		a, err := readProxy([]byte(arg), "the proxy definition", "")
		if err != nil {
			return nil, err
		}
		a.Inline = arg
		return a, nil
	}
	b, err := os.ReadFile(arg)
	if ex, ok := proxyexamples.Read(arg); errors.Is(err, fs.ErrNotExist) && ok {
		b, err = ex, nil // the example pgscale carries, wherever it runs
	}
	if err != nil {
		return nil, fmt.Errorf("proxy: %v", err)
	}
	a, err := readProxy(b, arg, filepath.Dir(arg))
	if err != nil {
		return nil, err
	}
	a.File = arg
	return a, nil
}

// parseProxyDef reads a proxy given in a suite file's target map
// (proxy:), as the suite file writes it: the definition itself, or the
// name of the file holding it, relative to dir (the suite file's).
func parseProxyDef(data []byte, dir string) (Arg, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("the proxy definition: %s", oneLine(yaml.FormatError(err, false, true)))
	}
	if file, ok := v.(string); ok {
		if !filepath.IsAbs(file) && dir != "" {
			file = filepath.Join(dir, file)
		}
		return parseProxyArg(file)
	}
	a, err := readProxy(data, "the proxy definition", "")
	if err != nil {
		return nil, err
	}
	// Written back as an inline definition, as --target takes it.
	js, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("the proxy definition: %w", err)
	}
	a.Inline = string(js)
	return a, nil
}

// readProxy reads a proxy definition (YAML, or JSON, which YAML reads
// too): name names it in errors, dir is where its relative paths start
// ("" for none).
func readProxy(data []byte, name, dir string) (ProxyArg, error) {
	a := ProxyArg{}
	var y proxyYAML
	// A file may hold a suite file's target map: name: and proxy:.
	var wrapped struct {
		Name  string    `yaml:"name"`
		Proxy proxyYAML `yaml:"proxy"`
	}
	if err := yaml.UnmarshalWithOptions(data, &wrapped, yaml.DisallowUnknownField()); err == nil && wrapped.Proxy.Command != "" {
		y = wrapped.Proxy
	} else if err := yaml.UnmarshalWithOptions(data, &y, yaml.DisallowUnknownField()); err != nil {
		return a, fmt.Errorf("%s: %s", name, oneLine(yaml.FormatError(err, false, true)))
	}
	def, err := y.def(name, dir)
	if err != nil {
		return a, err
	}
	a.Def = def
	a.ServerConnections = y.ServerConnections
	if a.Of, err = ofList(y.Of); err != nil {
		return a, fmt.Errorf("%s: of: %v", name, err)
	}
	return a, nil
}

// cutObject is the proxy kind's split: it takes an inline definition, a
// JSON object, off the front of the argument: the object (empty when the
// argument is not one) and what follows its comma.
func cutObject(arg string) (obj, rest string, err error) {
	s := strings.TrimSpace(arg)
	if !strings.HasPrefix(s, "{") {
		return "", arg, nil
	}
	depth, inString, escaped := 0, false, false
	for i, r := range s {
		switch {
		case escaped:
			escaped = false
		case inString && r == '\\':
			escaped = true
		case r == '"':
			inString = !inString
		case inString:
		case r == '{':
			depth++
		case r == '}':
			depth--
			if depth == 0 {
				rest = strings.TrimSpace(s[i+1:])
				if rest != "" && !strings.HasPrefix(rest, ",") {
					return "", "", fmt.Errorf("after the definition {...} want ,of=NAME, not %q", rest)
				}
				return s[:i+1], strings.TrimPrefix(rest, ","), nil
			}
		}
	}
	return "", "", fmt.Errorf("the definition {... is not closed")
}

// oneLine joins a multi-line message.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// shardName is a table (maybe schema-qualified) or a column in shards:.
var shardName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$`)

// def checks a definition as written and turns it into a ProxyDef: the
// templates parse, ready and stop read, relative program paths are taken
// from dir (the definition file's).
func (y proxyYAML) def(name, dir string) (ProxyDef, error) {
	bad := func(format string, args ...any) (ProxyDef, error) {
		return ProxyDef{}, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
	}
	d := ProxyDef{Program: y.Program, Command: strings.TrimSpace(y.Command), Connect: y.Connect, ReadOnly: y.ReadOnly}
	if d.Command == "" {
		return bad("command: the program's command line is missing (command: pgbouncer {{dir}}/pgbouncer.ini)")
	}
	for _, item := range y.Shards {
		table, ok := item.Key.(string)
		column, isText := item.Value.(string)
		if !ok || !isText || !shardName.MatchString(table) || !shardName.MatchString(column) {
			return bad("shards: each is TABLE: COLUMN, the column its rows are sharded by (pgbench_accounts: aid)")
		}
		d.Shards = append(d.Shards, ProxyShard{Table: table, Column: column})
	}
	if dir != "" {
		d.Command = relativeProgram(d.Command, dir)
	}
	for _, item := range y.Files {
		fname, ok := item.Key.(string)
		text, isText := item.Value.(string)
		if !ok || !isText {
			return bad("files: each file is NAME: TEXT (a template)")
		}
		if fname == "" || strings.Contains(fname, "/") || fname == "." || fname == ".." {
			return bad("files: %q: a file name, without a directory", fname)
		}
		d.Files = append(d.Files, ProxyFile{Name: fname, Template: text})
	}
	for _, t := range append([]ProxyFile{{"command", d.Command}, {"connect", d.Connect}}, d.Files...) {
		if err := ParseProxyTemplate(t.Name, t.Template, nil); err != nil {
			return bad("%v", err)
		}
	}
	if y.Ready != "" {
		r, err := time.ParseDuration(y.Ready)
		if err != nil || r <= 0 {
			return bad("ready: %q is not a duration (20s)", y.Ready)
		}
		d.Ready = r
	}
	if y.Stop != "" {
		sig, ok := signals[strings.TrimPrefix(strings.ToUpper(y.Stop), "SIG")]
		if !ok {
			return bad("stop: %q: want SIGTERM, SIGINT, SIGQUIT or SIGHUP", y.Stop)
		}
		d.Stop = sig
	}
	if a := y.Admin; a != nil {
		if len(a.Commands) == 0 {
			return bad("admin: needs commands: (command:, pool:, columns: or count:) and, unless the console is where the clients connect, connect: (dbname=pgbouncer)")
		}
		if err := ParseProxyTemplate("admin connect", a.Connect, nil); err != nil {
			return bad("%v", err)
		}
		d.Admin = &ProxyAdmin{Connect: a.Connect}
		for i, c := range a.Commands {
			if strings.TrimSpace(c.Command) == "" || len(c.Columns)+len(c.Count) == 0 {
				return bad("admin: commands[%d]: needs command: (SHOW POOLS) and columns: (FIGURE: COLUMN) or count: (FIGURE: COLUMN = VALUE)", i)
			}
			ac := watch.AdminCommand{Command: c.Command, Pool: c.Pool}
			for fig, col := range c.Columns {
				if !slices.Contains(watch.Figures, fig) {
					return bad("admin: commands[%d]: columns: %q is no pool figure (want %s)", i, fig, strings.Join(watch.Figures, ", "))
				}
				name, factor, err := adminColumn(col)
				if err != nil {
					return bad("admin: commands[%d]: columns: %s: %v", i, fig, err)
				}
				if ac.Columns == nil {
					ac.Columns = map[string]string{}
				}
				ac.Columns[fig] = name
				if factor != 1 {
					if ac.Scale == nil {
						ac.Scale = map[string]float64{}
					}
					ac.Scale[fig] = factor
				}
			}
			for fig, rule := range c.Count {
				if !slices.Contains(watch.Figures, fig) {
					return bad("admin: commands[%d]: count: %q is no pool figure (want %s)", i, fig, strings.Join(watch.Figures, ", "))
				}
				m, err := adminMatch(rule)
				if err != nil {
					return bad("admin: commands[%d]: count: %s: %v", i, fig, err)
				}
				if ac.Count == nil {
					ac.Count = map[string]watch.RowMatch{}
				}
				ac.Count[fig] = m
			}
			d.Admin.Commands = append(d.Admin.Commands, ac)
		}
	}
	if y.ServerConnections < 0 {
		return bad("server_connections: %d: want a number of connections", y.ServerConnections)
	}
	if b := y.Build; b != nil {
		if strings.TrimSpace(b.Source) == "" || strings.TrimSpace(b.Run) == "" {
			return bad("build: needs source: (PATH[@REV][+PATCH]) and run: (the build command, as ./configure && make)")
		}
		if b.Keep != "" && b.Keep != build.KeepTree && b.Keep != build.KeepPrefix {
			return bad("build: keep: %q: want %s or %s", b.Keep, build.KeepTree, build.KeepPrefix)
		}
		src := b.Source
		if dir != "" && !filepath.IsAbs(src) && !strings.HasPrefix(src, "~/") {
			src = filepath.Join(dir, src)
		}
		parsed, err := build.ParseSource(src)
		if err != nil {
			return bad("build: %v", err)
		}
		// Its patches, like its tree, are relative to the definition's
		// file, not to where pgscale runs.
		if dir != "" && len(parsed.Patches) > 0 {
			for i, p := range parsed.Patches {
				if !filepath.IsAbs(p) {
					parsed.Patches[i] = filepath.Join(dir, p)
				}
			}
			src = parsed.String()
		}
		d.Build = &ProxyBuild{Source: src, Run: b.Run, Keep: b.Keep}
	}
	return d, nil
}

var signals = map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT, "HUP": syscall.SIGHUP}

// relativeProgram makes a command line's program, written as a relative
// path (./target/release/mypooler), relative to dir.
func relativeProgram(cmd, dir string) string {
	first := strings.Fields(cmd)[0]
	if !strings.HasPrefix(first, "./") && !strings.HasPrefix(first, "../") {
		return cmd
	}
	abs, err := filepath.Abs(filepath.Join(dir, first))
	if err != nil {
		return cmd
	}
	return shellQuote(abs) + cmd[len(first):]
}

// ofList reads of: as one name or a list of names.
func ofList(v any) ([]string, error) {
	var names []string
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		names = []string{x}
	case []any:
		for _, n := range x {
			s, ok := n.(string)
			if !ok {
				return nil, fmt.Errorf("%v: want target names", n)
			}
			names = append(names, s)
		}
	default:
		return nil, fmt.Errorf("%v: want a target name or a list of names", v)
	}
	for _, n := range names {
		if strings.Contains(n, ":") {
			continue // a server of its own: a spec
		}
		if err := checkTargetName(n); err != nil {
			return nil, err
		}
	}
	return names, nil
}

func (a ProxyArg) plan(ctx context.Context, spec Spec, o *opening) (starter, error) {
	def := a.Def
	var built *build.Build
	if def.Build != nil {
		var err error
		if built, err = buildProxy(ctx, spec, a, o.opt, o.log); err != nil {
			return nil, err
		}
	}
	bin, err := proxyProgram(def.Command)
	if err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	if bin != "" {
		def.Command = shellQuote(bin) + strings.TrimSpace(def.Command)[len(strings.Fields(def.Command)[0]):]
		if def.Program == "" {
			def.Program = filepath.Base(bin)
		}
	}
	conns := a.ServerConnections
	if conns == 0 {
		conns = o.needs.Clients + 10
	}
	return &proxyStart{spec: spec, def: def, opt: o.opt, conns: conns, built: built}, nil
}

// buildProxy builds a proxy's program from its source at its revision
// (or finds the build in the build cache dir), saying what it does
// through log. A build that fails is an error naming its phase and log; a
// source that cannot be read is a usage error.
func buildProxy(ctx context.Context, spec Spec, a ProxyArg, opt ClusterOptions, log func(string)) (*build.Build, error) {
	w, src, err := a.what(spec, nil)
	if err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	b := a.Def.Build
	label := proxyLabel(spec)
	builder := opt.builder()
	builder.Progress = func(e build.Event) {
		switch {
		case e.Phase == build.PhaseCached && e.Done:
			log(fmt.Sprintf("%s: %s found in the build cache (%s)", label, src, e.Key))
		case !e.Done && e.Phase == build.PhaseBuild:
			log(fmt.Sprintf("%s: building %s (%s): %s...", label, src, e.Key, b.Run))
		case e.Done && e.Phase == build.PhaseBuild:
			log(fmt.Sprintf("%s: built in %s", label, e.Elapsed.Round(time.Second)))
		}
	}
	if f, err := builder.Failed(ctx, w); err == nil && f != nil {
		log(fmt.Sprintf("%s: the last build of %s (%s) failed at %s in phase %s (log: %s); building it again", label, src, short(f.Key), f.When.Format("2006-01-02 15:04 UTC"), f.Phase, f.Log))
	}
	bld, err := builder.Build(ctx, w)
	if err != nil {
		var be *build.Error
		if errors.As(err, &be) {
			return nil, named(spec, err)
		}
		return nil, usage.Wrap(named(spec, err))
	}
	return bld, nil
}

// forTarget names a pooler's target in its progress lines, " for p4"
// (nothing for run --pooler's, the run's one target).
func forTarget(spec Spec) string {
	if spec.Name == "" {
		return ""
	}
	return " for " + spec.Name
}

// proxyLabel names a proxy's build in progress lines: "base's proxy".
func proxyLabel(spec Spec) string {
	if spec.Name == "" {
		return "the proxy"
	}
	return spec.Name + "'s proxy"
}

// needsBuild says the definition has build: (pgscale build makes it ahead
// of a run, as the run would).
func (a ProxyArg) needsBuild() bool { return a.Def.Build != nil }

// what is the definition's build, as the run makes it (buildProxy).
func (a ProxyArg) what(spec Spec, _ *opening) (build.Spec, string, error) {
	b := a.Def.Build
	src, err := build.ParseSource(b.Source)
	if err != nil {
		return nil, "", err
	}
	return build.Command{Name: proxyLabel(spec), Source: src, Run: b.Run, Keep: b.Keep}, src.String(), nil
}

// proxyProgram finds the program a command line starts, when it is
// written as a plain name or path: its path ("" when the command line
// starts with a template or a shell construct, left for the shell).
func proxyProgram(cmd string) (string, error) {
	first := strings.Fields(cmd)[0]
	if strings.Contains(first, "{{") || strings.ContainsAny(first, shellMeta+"='\"") {
		return "", nil
	}
	if strings.Contains(first, "/") {
		if !isExecutable(first) {
			return "", fmt.Errorf("proxy command: %s is not an executable file", first)
		}
		return first, nil
	}
	places := []place{{label: "PATH", at: func() string { return lookPath(first) }}}
	for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/local/bin"} {
		places = append(places, place{label: dir, at: func() string { return filepath.Join(dir, first) }})
	}
	return search(ErrNoProxy, isExecutable, "install it, or give its path in the command", places...)
}

// ErrNoProxy says a proxy's program was not found.
var ErrNoProxy = errors.New("proxy program not found")

// StartError is a proxy that could not start, with its whole log (passwords
// redacted), for the caller to keep where the result would have gone.
type StartError struct {
	Target  string // the target's name; empty for run's
	Program string
	Log     string
	Err     error
}

func (e *StartError) Error() string { return e.Err.Error() }

// Unwrap returns why it could not start.
func (e *StartError) Unwrap() error { return e.Err }

// proxyStart starts a proxy target that its plan checked.
type proxyStart struct {
	spec  Spec
	def   ProxyDef
	opt   ClusterOptions
	conns int
	built *build.Build // the program's build; nil without build:
}

func (p *proxyStart) frontConnections() int { return p.conns }

func (p *proxyStart) start(ctx context.Context, fronts []*Server, needs Needs, log func(string)) (*Server, error) {
	var ups []Upstream
	var where []string
	for i, f := range fronts {
		name := f.Info.Name
		if i < len(p.spec.Of) {
			name = p.spec.Of[i]
		}
		ups = append(ups, UpstreamOf(name, f.Config))
		where = append(where, f.Info.Description)
		for j, r := range f.Replicas {
			u := UpstreamOf(replicaName(name, j+1), r.Config)
			u.Role = "replica"
			ups = append(ups, u)
			where = append(where, r.Info.Description+" (replica)")
		}
	}
	program := p.def.Program
	if program == "" {
		program = programName(p.def.Command)
	}
	log(fmt.Sprintf("starting %s%s in front of %s...", program, forTarget(p.spec), strings.Join(where, " and ")))
	opts := ProxyOptions{Def: p.def, Upstreams: ups, OSUser: p.opt.OSUser, Clients: needs.Clients + 10, Valgrind: p.opt.Valgrind}
	if p.built != nil {
		opts.Build = p.built.Dir
	}
	px, err := StartProxy(ctx, opts)
	if err != nil {
		se := &StartError{Target: p.spec.Name, Program: program, Err: err}
		if px != nil {
			if b, rerr := os.ReadFile(px.LogFile); rerr == nil {
				se.Log = px.redact(string(b))
			}
			px.Stop()
		}
		return nil, named(p.spec, se)
	}
	cfg, err := ParseDSN(px.ConnString(ups[0].Database))
	if err != nil {
		px.Stop()
		return nil, named(p.spec, fmt.Errorf("%s: connect: %w", program, err))
	}
	front := fronts[0]
	fi := front.Info
	pl := &result.Pooler{Program: px.Name, Settings: map[string]string{}, Server: strings.Join(where, "; "),
		ServerKind: fi.Kind, Of: strings.Join(p.spec.Of, ","), Command: px.Command, Files: px.Files}
	if b := p.built; b != nil {
		m := b.Manifest
		pl.Build = &result.PoolerBuild{Source: p.def.Build.Source, Commit: m.Source.Commit, Tree: m.Source.Tree, Key: b.Key, Command: m.Command}
		// The commit this definition's source resolves to: the cache may
		// hold the same tree built from another commit.
		if src, err := build.ParseSource(p.def.Build.Source); err == nil {
			if r, err := build.ResolveSource(ctx, src); err == nil {
				pl.Build.Commit, pl.Build.Tree = r.Commit, r.Tree
			}
		}
	}
	return &Server{Config: cfg, Pooler: px, Fronts: front, log: log, Info: result.Target{
		Kind: string(ProxyKind), Name: p.spec.Name, Description: Describe(cfg), BinDir: fi.BinDir, Preloaded: fi.Preloaded, Tmpfs: fi.Tmpfs,
		Pooler: pl,
	}}, nil
}

// adminColumn reads an admin command's column as written: "COLUMN", or
// "COLUMN * FACTOR" (or "/ DIVISOR") for a pooler that writes another
// unit than the figure's.
func adminColumn(s string) (name string, factor float64, err error) {
	s = strings.TrimSpace(s)
	for _, op := range []string{"*", "/"} {
		col, num, ok := strings.Cut(s, op)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || f <= 0 || strings.TrimSpace(col) == "" {
			return "", 0, fmt.Errorf("%q: want COLUMN, or COLUMN %s A POSITIVE NUMBER", s, op)
		}
		if op == "/" {
			f = 1 / f
		}
		return strings.TrimSpace(col), f, nil
	}
	if s == "" {
		return "", 0, fmt.Errorf("no column named")
	}
	return s, 1, nil
}

// adminMatch reads a count: rule, "COLUMN = VALUE" or "COLUMN != VALUE".
func adminMatch(s string) (watch.RowMatch, error) {
	m := watch.RowMatch{}
	col, val, ok := strings.Cut(s, "!=")
	if ok {
		m.Not = true
	} else if col, val, ok = strings.Cut(s, "="); !ok {
		return m, fmt.Errorf("%q: want COLUMN = VALUE or COLUMN != VALUE", s)
	}
	m.Column, m.Value = strings.TrimSpace(col), strings.TrimSpace(val)
	if m.Column == "" {
		return m, fmt.Errorf("%q: no column named", s)
	}
	return m, nil
}
