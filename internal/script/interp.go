package script

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"time"
)

// variable is one client variable, as pgbench's Variable: known as a string,
// as a value, or both (the string form cached once computed).
type variable struct {
	defined bool
	val     value  // tNone when only the string is known
	str     []byte // string form, valid when hasStr
	hasStr  bool
}

// Interp is one client's interpreter state: its variables and random state.
// An Interp must not be used by several goroutines at once.
type Interp struct {
	p           *Program
	id          int
	vars        []variable
	extra       map[string]int // variables created at run time by \gset/\aset
	rs          prng           // random functions (pgbench's cs_func_rs)
	txRS        prng           // rs at the start of the transaction, for retries
	choose      prng           // script choice (pgbench's per-thread ts_choose_rs)
	shared      *sharedRand    // the thread's script choice, when it has several clients
	defaultSeed int64
	lastS       *Script
	lastMap     []int32
	lastIdx     int
	scratch     []byte
	key         []byte
}

// ID returns the client's number (pgbench's :client_id unless -D overrides it).
func (c *Interp) ID() int { return c.id }

// Choose picks a script index by weight from the client's own random state
// (pgbench's chooseScript).
func (c *Interp) Choose() int {
	p := c.p
	if len(p.scripts) == 1 {
		return 0
	}
	var w int64
	if sh := c.shared; sh != nil {
		sh.mu.Lock()
		w = getrand(&sh.rs, 0, p.totalWeight-1)
		sh.mu.Unlock()
	} else {
		w = getrand(&c.choose, 0, p.totalWeight-1)
	}
	i := 0
	for {
		w -= int64(p.scripts[i].Weight)
		i++
		if w < 0 {
			break
		}
	}
	return i - 1
}

// Begin marks the start of a transaction (pgbench's CSTATE_START_TX): the
// random state is saved so that Retry can replay the same values.
func (c *Interp) Begin() { c.txRS = c.rs }

// Retry restores the random state saved by Begin, as pgbench does before
// re-running a transaction after a serialization or deadlock failure.
func (c *Interp) Retry() { c.rs = c.txRS }

func (c *Interp) scriptMap(s *Script) ([]int32, int) {
	if s == c.lastS {
		return c.lastMap, c.lastIdx
	}
	for i, t := range c.p.scripts {
		if t == s {
			c.lastS, c.lastMap, c.lastIdx = s, c.p.maps[i], i
			return c.lastMap, i
		}
	}
	return nil, -1
}

// lookup finds a variable by name.
func (c *Interp) lookup(name string) (int, bool) {
	if i, ok := c.p.index[name]; ok {
		return i, true
	}
	i, ok := c.extra[name]
	return i, ok
}

func (c *Interp) setValue(idx int, v value) {
	x := &c.vars[idx]
	x.defined = true
	x.val = v
	x.hasStr = false
}

func (c *Interp) setString(idx int, s string) {
	x := &c.vars[idx]
	x.defined = true
	x.val = value{}
	x.str = append(x.str[:0], s...)
	x.hasStr = true
}

func (c *Interp) setBytes(idx int, s []byte) {
	x := &c.vars[idx]
	x.defined = true
	x.val = value{}
	x.str = append(x.str[:0], s...)
	x.hasStr = true
}

// text returns the variable's string form (pgbench's getVariable).
func (c *Interp) text(idx int) ([]byte, bool) {
	x := &c.vars[idx]
	if !x.defined {
		return nil, false
	}
	if !x.hasStr {
		x.str = x.val.appendText(x.str[:0])
		x.hasStr = true
	}
	return x.str, true
}

// makeValue is pgbench's makeVariableValue.
func (c *Interp) makeValue(x *variable, idx int32) error {
	if x.val.t != tNone {
		return nil
	}
	s := x.str
	if len(s) == 0 {
		return errorf("variable \"%s\" has an empty value", c.name(int(idx)))
	}
	str := string(s) // small; only on the first use of a string value
	switch {
	case equalFoldASCII(str, "null"):
		x.val = nullValue()
	case prefixOfFold(str, "true") || prefixOfFold(str, "yes") || equalFoldASCII(str, "on"):
		x.val = boolValue(true)
	case prefixOfFold(str, "false") || prefixOfFold(str, "no") || equalFoldASCII(str, "off") || equalFoldASCII(str, "of"):
		x.val = boolValue(false)
	case isAnInt(str):
		i, err := strtoint64(str)
		if err != nil {
			return err
		}
		x.val = intValue(i)
	default:
		d, ok, _ := strtodouble(str)
		if !ok {
			return errorf("malformed variable \"%s\" value: \"%s\"", c.name(int(idx)), str)
		}
		x.val = doubleValue(d)
	}
	return nil
}

func (c *Interp) name(idx int) string {
	if idx < len(c.p.names) {
		return c.p.names[idx]
	}
	for n, i := range c.extra {
		if i == idx {
			return n
		}
	}
	return "?"
}

// assign stores v into the variable, checking the name on first definition
// as pgbench's lookupCreateVariable does.
func (c *Interp) assign(context string, idx int, v value) error {
	if !c.vars[idx].defined && idx < len(c.p.valid) && !c.p.valid[idx] {
		return errorf("%s: invalid variable name: \"%s\"", context, c.name(idx))
	}
	c.setValue(idx, v)
	return nil
}

func (c *Interp) rtErr(s *Script, cmd *Command, err error) error {
	e := &RuntimeError{Script: s.Name, Line: cmd.Line, Msg: err.Error(), Verb: cmd.verb, Failed: "execution of meta-command failed"}
	switch cmd.Kind {
	case KindSet, KindIf, KindElif:
		e.Failed = "evaluation of meta-command failed"
	case KindSleep, KindShell, KindSetShell:
		e.Verb = cmd.Kind.String()
	}
	return e
}

// assignErr is rtErr for a \set whose value could not be stored.
func (c *Interp) assignErr(s *Script, cmd *Command, err error) error {
	return &RuntimeError{Script: s.Name, Line: cmd.Line, Msg: err.Error(), Verb: "set", Failed: "assignment of meta-command failed"}
}

// Meta executes the meta-command at index pc of script s and returns the
// index of the next command to run (\if, \elif, \else jump; others pc+1).
// For \sleep it returns the duration and the engine sleeps. The pipeline
// commands are the engine's: Meta just returns pc+1 for them.
func (c *Interp) Meta(s *Script, pc int) (next int, sleep time.Duration, err error) {
	cmd := s.Commands[pc]
	vmap, sidx := c.scriptMap(s)
	if vmap == nil {
		return pc + 1, 0, &RuntimeError{Script: s.Name, Line: cmd.Line, Msg: "script is not part of the program"}
	}
	x := evalCtx{vmap: vmap, script: sidx, command: pc}
	switch cmd.Kind {
	case KindSet:
		v, err := c.eval(cmd.expr, &x)
		if err != nil {
			return pc + 1, 0, c.rtErr(s, cmd, err)
		}
		if err := c.assign(cmd.verb, int(vmap[cmd.setVar]), v); err != nil {
			return pc + 1, 0, c.assignErr(s, cmd, err)
		}
		return pc + 1, 0, nil
	case KindIf:
		v, err := c.eval(cmd.expr, &x)
		if err != nil {
			return pc + 1, 0, c.rtErr(s, cmd, err)
		}
		if v.truth() {
			return pc + 1, 0, nil
		}
		j := cmd.next
		for {
			b := s.Commands[j]
			switch b.Kind {
			case KindElif:
				x.command = j
				v, err := c.eval(b.expr, &x)
				if err != nil {
					return j + 1, 0, c.rtErr(s, b, err)
				}
				if v.truth() {
					return j + 1, 0, nil
				}
				j = b.next
			default: // \else or \endif
				return j + 1, 0, nil
			}
		}
	case KindElif, KindElse:
		// reached by falling out of a branch that ran: skip to \endif
		return cmd.endif + 1, 0, nil
	case KindEndIf:
		return pc + 1, 0, nil
	case KindSleep:
		d, err := c.sleepDuration(cmd, vmap)
		if err != nil {
			return pc + 1, 0, c.rtErr(s, cmd, err)
		}
		return pc + 1, d, nil
	case KindShell, KindSetShell:
		if err := c.runShell(cmd, vmap); err != nil {
			return pc + 1, 0, c.rtErr(s, cmd, err)
		}
		return pc + 1, 0, nil
	}
	return pc + 1, 0, nil
}

// atoi is C's atoi as glibc implements it: strtol, truncated to int.
func atoi(s string) int32 {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var v uint64
	over := false
	for ; i < len(s) && isDigit(s[i]); i++ {
		if v > (math.MaxUint64-9)/10 {
			over = true
		}
		v = v*10 + uint64(s[i]-'0')
	}
	var r int64
	switch {
	case neg && (over || v > 1<<63):
		r = math.MinInt64
	case !neg && (over || v > math.MaxInt64):
		r = math.MaxInt64
	case neg:
		r = -int64(v)
	default:
		r = int64(v)
	}
	return int32(r)
}

// sleepDuration is pgbench's evaluateSleep; arithmetic is on a C int.
func (c *Interp) sleepDuration(cmd *Command, vmap []int32) (time.Duration, error) {
	sl := &cmd.sleep
	var usec int32
	if sl.vidx >= 0 {
		b, ok := c.text(int(vmap[sl.vidx]))
		if !ok {
			return 0, errorf("%s: undefined variable \"%s\"", cmd.verb, sl.name)
		}
		usec = atoi(string(b))
		if usec == 0 && (len(b) == 0 || !isDigit(b[0])) {
			return 0, errorf("%s: invalid sleep time \"%s\" for variable \"%s\"", cmd.verb, b, sl.name)
		}
	} else {
		usec = atoi(sl.literal)
	}
	switch {
	case sl.unit == "" && len(cmd.words) < 2:
		usec *= 1000000
	case equalFoldASCII(sl.unit, "ms"):
		usec *= 1000
	case equalFoldASCII(sl.unit, "s"):
		usec *= 1000000
	}
	if usec <= 0 {
		return 0, nil
	}
	return time.Duration(usec) * time.Microsecond, nil
}

const shellCommandSize = 256

// runShell is pgbench's runShellCommand.
func (c *Interp) runShell(cmd *Command, vmap []int32) error {
	args := cmd.shell
	argv0 := args[0].name
	var b strings.Builder
	for i, a := range args {
		var arg string
		if a.vidx >= 0 {
			v, ok := c.text(int(vmap[a.vidx]))
			if !ok {
				return errorf("%s: undefined variable \"%s\"", argv0, a.name)
			}
			arg = string(v)
		} else {
			arg = a.lit
		}
		sep := 0
		if i > 0 {
			sep = 1
		}
		if b.Len()+len(arg)+sep >= shellCommandSize-1 {
			return errorf("%s: shell command is too long", argv0)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(arg)
	}
	command := b.String()
	if cmd.Kind == KindShell {
		// pgbench's system(): the command's output is pgbench's own.
		sh := exec.Command("/bin/sh", "-c", command)
		sh.Stdout, sh.Stderr = c.p.opts.ShellStdout, c.p.opts.ShellStderr
		if err := sh.Run(); err != nil {
			return errorf("%s: could not launch shell command", argv0)
		}
		return nil
	}
	sh := exec.Command("/bin/sh", "-c", command)
	sh.Stderr = c.p.opts.ShellStderr
	out, err := sh.StdoutPipe()
	if err != nil {
		return errorf("%s: could not launch shell command", argv0)
	}
	if err := sh.Start(); err != nil {
		return errorf("%s: could not launch shell command", argv0)
	}
	// fgets(res, 64, fp): at most 63 bytes, up to and including a newline
	r := bufio.NewReader(out)
	var res []byte
	for len(res) < 63 {
		ch, err := r.ReadByte()
		if err != nil {
			break
		}
		res = append(res, ch)
		if ch == '\n' {
			break
		}
	}
	_, _ = r.WriteTo(discard{})
	_ = sh.Wait()
	if len(res) == 0 {
		return errorf("%s: could not read result of shell command", argv0)
	}
	// strtol, then only trailing whitespace allowed
	s := string(res)
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	j := i
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	k := j
	for k < len(s) && isDigit(s[k]) {
		k++
	}
	end := k
	if k == j {
		end = 0 // no conversion: endptr is the start
	}
	rest := strings.TrimLeft(s[end:], " \t\n\v\f\r")
	if rest != "" {
		return errorf("%s: shell command must return an integer (not \"%s\")", argv0, s)
	}
	v := int64(atoi(s))
	if err := c.assign("setshell", int(vmap[cmd.setVar]), intValue(v)); err != nil {
		return err
	}
	return nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Params returns the text form of each parameter of q (nil for an undefined
// variable, which pgbench sends as NULL), reusing dst's backing storage.
// The returned slices alias the client's variables: they stay valid until
// the next call that changes a variable (Meta, Store).
func (c *Interp) Params(q *SQL, dst [][]byte) ([][]byte, error) {
	dst = dst[:0]
	if len(q.params) == 0 {
		return dst, nil
	}
	vmap, _ := c.scriptMap(q.script)
	if vmap == nil {
		return dst, fmt.Errorf("script of statement is not part of the program")
	}
	for _, vi := range q.params {
		b, ok := c.text(int(vmap[vi]))
		if !ok {
			dst = append(dst, nil)
			continue
		}
		dst = append(dst, b)
	}
	return dst, nil
}

// AppendSimple appends q's text with variables substituted as pgbench's
// simple protocol mode does: defined variables are replaced by their text,
// undefined ones are left as written.
func (c *Interp) AppendSimple(dst []byte, q *SQL) ([]byte, error) {
	if len(q.params) == 0 {
		return append(dst, q.text...), nil
	}
	vmap, _ := c.scriptMap(q.script)
	if vmap == nil {
		return dst, fmt.Errorf("script of statement is not part of the program")
	}
	for _, pc := range q.pieces {
		dst = append(dst, pc.lit...)
		if pc.vidx < 0 {
			break
		}
		if b, ok := c.text(int(vmap[pc.vidx])); ok {
			dst = append(dst, b...)
		} else {
			dst = append(dst, pc.ref...)
		}
	}
	return dst, nil
}

// Store assigns one result row to variables for \gset/\aset: each column's
// value goes to the variable named prefix+column name, as a string (a NULL
// becomes the empty string, as pgbench's PQgetvalue gives). The engine
// enforces the row-count rules: under \gset the last statement's result must
// have exactly one row (else RowCountError); under \aset each statement's
// last row is stored and empty results are skipped.
func (c *Interp) Store(q *SQL, names []string, values [][]byte) error {
	context := "gset"
	if q.Store == StoreAset {
		context = "aset"
	}
	for i, n := range names {
		c.key = append(append(c.key[:0], q.Prefix...), n...)
		idx, ok := c.p.index[string(c.key)]
		if !ok {
			idx, ok = c.extra[string(c.key)]
		}
		if !ok {
			name := string(c.key)
			if !validVariableName(name) {
				return &RuntimeError{Script: scriptName(q), Line: q.line,
					Msg: fmt.Sprintf("%s: invalid variable name: \"%s\"; error storing into variable %s", context, name, name)}
			}
			if c.extra == nil {
				c.extra = make(map[string]int)
			}
			idx = len(c.vars)
			c.vars = append(c.vars, variable{})
			c.extra[name] = idx
		} else if !c.vars[idx].defined && idx < len(c.p.valid) && !c.p.valid[idx] {
			name := string(c.key)
			return &RuntimeError{Script: scriptName(q), Line: q.line,
				Msg: fmt.Sprintf("%s: invalid variable name: \"%s\"; error storing into variable %s", context, name, name)}
		}
		var v []byte
		if i < len(values) {
			v = values[i]
		}
		c.setBytes(idx, v)
	}
	return nil
}

func scriptName(q *SQL) string {
	if q.script != nil {
		return q.script.Name
	}
	return ""
}

// RowCountError is pgbench's error for a \gset whose query returned rows
// rows instead of exactly one.
func RowCountError(s *Script, cmd *Command, rows int) error {
	return &RuntimeError{Script: s.Name, Line: cmd.Line, Msg: fmt.Sprintf("expected one row, got %d", rows)}
}

// Var returns a variable's value as pgbench would substitute it.
func (c *Interp) Var(name string) (string, bool) {
	i, ok := c.lookup(name)
	if !ok {
		return "", false
	}
	b, ok := c.text(i)
	if !ok {
		return "", false
	}
	return string(bytes.Clone(b)), true
}
