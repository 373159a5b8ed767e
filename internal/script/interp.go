package script

import (
	"bytes"
	"fmt"
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
