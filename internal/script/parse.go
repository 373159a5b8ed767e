package script

import (
	"fmt"
	"strings"
)

// Kind is the kind of a script command.
type Kind uint8

// The kinds of commands: SQL, and each meta-command.
const (
	KindSQL Kind = iota
	KindSet
	KindSetShell
	KindShell
	KindSleep
	KindIf
	KindElif
	KindElse
	KindEndIf
	KindStartPipeline
	KindSyncPipeline
	KindEndPipeline
)

var kindNames = [...]string{"sql", "set", "setshell", "shell", "sleep", "if", "elif", "else", "endif",
	"startpipeline", "syncpipeline", "endpipeline"}

// String returns the kind's name as written after a backslash ("sql" for SQL).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// StoreKind tells whether an SQL command stores its results into variables.
type StoreKind uint8

// Result storing of an SQL command: none, \gset, \aset.
const (
	StoreNone StoreKind = iota
	StoreGset
	StoreAset
)

// Script is a parsed pgbench script.
type Script struct {
	Name     string
	Source   string
	Weight   int // set by the caller; Parse sets 1
	Commands []*Command

	vars varTable // names of the variables the script refers to
}

// Command is one command of a script: an SQL command or a meta-command.
type Command struct {
	Kind Kind
	Line int    // 1-based line where the command starts
	Text string // the command as written, whitespace collapsed (for -r per-statement reports)
	SQL  *SQL   // for KindSQL only

	expr    *node      // \set, \if, \elif
	setVar  int        // \set, \setshell: script-local variable index
	setName string     // \set, \setshell: variable name
	words   []string   // meta-command arguments, argv[1:] in pgbench
	shell   []shellArg // \shell, \setshell command words
	sleep   sleepArg   // \sleep
	next    int        // \if, \elif: index of the next \elif, \else or \endif
	endif   int        // \if, \elif, \else: index of the matching \endif
	index   int        // position in Script.Commands
	verb    string     // the meta-command's name as written (pgbench's argv[0])
	firstLn string     // pgbench's first_line, for messages
}

// FirstLine is the command as pgbench's reports show it (its first_line):
// an SQL command's first line (at most 127 bytes), a meta-command as
// written.
func (c *Command) FirstLine() string { return c.firstLn }

// SimpleProtocol reports whether the command is sent with the simple query
// protocol whatever -M says: a compound SQL command (joined with \;),
// which the extended protocol cannot carry.
func (c *Command) SimpleProtocol() bool { return c.Kind == KindSQL && c.SQL.Statements > 1 }

type shellArg struct {
	lit  string // literal text (when vidx < 0)
	vidx int    // script-local variable index, or -1
	name string // the argument as written
}

type sleepArg struct {
	vidx    int    // variable holding the duration, or -1
	name    string // variable name
	literal string // the number as written (parsed with atoi)
	unit    string // "us", "ms", "s" or "" (seconds)
}

// SQL is an SQL command: its text prepared for each query protocol.
type SQL struct {
	Prepared   string // the SQL with each :var occurrence replaced by $1..$n (extended and prepared modes)
	NParams    int
	Statements int // 1, or more when joined with \;
	Store      StoreKind
	Prefix     string // \gset/\aset prefix

	text   string     // the command text as pgbench keeps it (simple mode, before substitution)
	pieces []sqlPiece // simple mode: literal text followed by a variable reference
	params []int      // extended mode: script-local variable index of each $n
	pnames []string   // extended mode: variable name of each $n
	script *Script
	line   int
}

type sqlPiece struct {
	lit  string // text before the reference
	vidx int    // script-local variable index, or -1 for the final literal
	ref  string // the reference as written (":name")
}

// maxArgs is pgbench's MAX_ARGS: at most 255 parameters per statement and
// 255 arguments per meta-command.
const maxArgs = 256

// parser holds the state of one Parse call.
type parser struct {
	name  string
	src   string
	lines []int // offsets of line starts
	s     *Script
}

func (p *parser) lineOf(off int) int {
	lo, hi := 0, len(p.lines)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if p.lines[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1
}

func (p *parser) lineText(line int) string {
	start := p.lines[line-1]
	end := len(p.src)
	if line < len(p.lines) {
		end = p.lines[line] - 1
	}
	return strings.TrimRight(p.src[start:end], "\r\n")
}

// errAt builds a SyntaxError pointing at byte offset off (off < 0: no column).
func (p *parser) errAt(off, line int, msg string) *SyntaxError {
	e := &SyntaxError{File: p.name, Msg: msg}
	if off >= 0 {
		if off > len(p.src) {
			off = len(p.src)
		}
		e.Line = p.lineOf(off)
		e.Column = off - p.lines[e.Line-1] + 1
	} else {
		e.Line = line
	}
	if e.Line > 0 {
		e.Source = p.lineText(e.Line)
	}
	return e
}

func commandMsg(msg, more, command string) string {
	if more != "" {
		msg += " (" + more + ")"
	}
	if command != "" {
		msg += ` in command "` + command + `"`
	}
	return msg
}

// Parse parses a pgbench script. name labels errors ("bench.sql",
// "builtin:tpcb-like"); the error is a *SyntaxError.
func Parse(name, src string) (*Script, error) {
	s := &Script{Name: name, Source: src, Weight: 1}
	p := &parser{name: name, src: src, s: s, lines: []int{0}}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			p.lines = append(p.lines, i+1)
		}
	}
	sc := &sqlScanner{src: src}
	var buf []byte
	for {
		var res scanResult
		var start int
		buf, res, start = sc.scan(buf[:0])
		if cmd := p.sqlCommand(buf, start); cmd != nil {
			s.Commands = append(s.Commands, cmd)
		}
		if res == scanBackslash {
			bs := sc.pos - 1
			cmd, err := p.backslash(sc, bs)
			if err != nil {
				return nil, err
			}
			if cmd != nil {
				if cmd.Kind == kindGset || cmd.Kind == kindAset {
					if err := p.attachStore(cmd, bs); err != nil {
						return nil, err
					}
				} else {
					s.Commands = append(s.Commands, cmd)
				}
			}
		}
		if res == scanIncomplete || res == scanEOL {
			break
		}
	}
	if len(s.Commands) == 0 {
		return nil, &SyntaxError{File: name, Msg: fmt.Sprintf("empty command list for script \"%s\"", name)}
	}
	for i, c := range s.Commands {
		c.index = i
	}
	if err := p.checkConditionals(); err != nil {
		return nil, err
	}
	return s, nil
}

// Internal kinds for \gset and \aset, which merge into the preceding SQL command.
const (
	kindGset Kind = 100 + iota
	kindAset
)

// sqlCommand is pgbench's create_sql_command plus parseQuery.
func (p *parser) sqlCommand(buf []byte, start int) *Command {
	text := string(buf)
	// skip_sql_comments: leading whitespace and "--" comments
	i := 0
	for {
		if i < len(text) && isCSpace(text[i]) {
			i++
		} else if strings.HasPrefix(text[i:], "--") {
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				return nil
			}
			i += j + 1
		} else {
			break
		}
	}
	if i >= len(text) {
		return nil
	}
	text = text[i:]
	line := 1
	if start >= 0 {
		line = p.lineOf(start)
	}
	q := &SQL{text: text, Statements: 1, script: p.s, line: line}
	cmd := &Command{Kind: KindSQL, Line: line, SQL: q, Text: collapse(text)}
	fl := text
	if len(fl) > 127 {
		fl = fl[:127]
	}
	if j := strings.IndexAny(fl, "\r\n"); j >= 0 {
		fl = fl[:j]
	}
	cmd.firstLn = fl
	q.Statements = countStatements(text)
	p.parseQuery(q)
	return cmd
}

// countStatements counts the statements of a command joined with \; (after
// psqlscan, a \; is a plain ';' inside the command text).
func countStatements(text string) int {
	sc := &sqlScanner{src: text}
	n := 0
	var buf []byte
	for {
		var res scanResult
		buf, res, _ = sc.scan(buf[:0])
		if strings.TrimSpace(strings.TrimSuffix(string(buf), ";")) != "" {
			n++
		}
		if res != scanSemicolon {
			break
		}
	}
	if n == 0 {
		n = 1
	}
	return n
}

// collapse returns s with runs of whitespace replaced by one space, trimmed.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// parseVariable is pgbench's parseVariable: the name after a colon at s[0],
// or "" when what follows is not a variable name.
func parseVariable(s string) string {
	i := 1
	if i < len(s) && (s[i] >= 0x80 || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] == '_') {
		i++
	} else {
		return ""
	}
	for i < len(s) && (s[i] >= 0x80 || isAlnum(s[i])) {
		i++
	}
	return s[1:i]
}

// parseQuery splits the SQL text at :name references, exactly as pgbench's
// parseQuery (extended) and assignVariables (simple) scan it: every colon
// followed by a name is a reference, even inside quotes and comments.
func (p *parser) parseQuery(q *SQL) {
	text := q.text
	var prepared strings.Builder
	last := 0
	i := 0
	for {
		j := strings.IndexByte(text[i:], ':')
		if j < 0 {
			break
		}
		i += j
		name := parseVariable(text[i:])
		if name == "" {
			for i < len(text) && text[i] == ':' {
				i++
			}
			continue
		}
		vidx := p.s.vars.intern(name)
		q.pieces = append(q.pieces, sqlPiece{lit: text[last:i], vidx: vidx, ref: text[i : i+1+len(name)]})
		q.params = append(q.params, vidx)
		q.pnames = append(q.pnames, name)
		prepared.WriteString(text[last:i])
		fmt.Fprintf(&prepared, "$%d", len(q.params))
		i += 1 + len(name)
		last = i
	}
	q.pieces = append(q.pieces, sqlPiece{lit: text[last:], vidx: -1})
	prepared.WriteString(text[last:])
	q.Prepared = prepared.String()
	q.NParams = len(q.params)
}

// ExtendedError reports whether the script can be run with the extended or
// prepared protocol: pgbench refuses statements with more than 255 variable
// references in those modes.
func (s *Script) ExtendedError() error {
	for _, c := range s.Commands {
		if c.Kind == KindSQL && c.SQL.NParams > maxArgs-1 {
			return &SyntaxError{File: s.Name, Line: c.Line,
				Msg: fmt.Sprintf("statement has too many arguments (maximum is %d): %s", maxArgs-1, c.SQL.text)}
		}
	}
	return nil
}

func (p *parser) attachStore(cmd *Command, bs int) error {
	name := "gset"
	if cmd.Kind == kindAset {
		name = "aset"
	}
	_ = name
	cmds := p.s.Commands
	if len(cmds) == 0 {
		return p.errAt(-1, cmd.Line, `\gset must follow an SQL command`)
	}
	prev := cmds[len(cmds)-1]
	if prev.Kind != KindSQL {
		return p.errAt(-1, cmd.Line, commandMsg(`\gset must follow an SQL command`, prev.firstLn, ""))
	}
	if prev.SQL.Store != StoreNone {
		// pgbench has not yet recorded an SQL command's first line here
		return p.errAt(-1, cmd.Line, `\gset must follow an SQL command`)
	}
	if cmd.Kind == kindGset {
		prev.SQL.Store = StoreGset
	} else {
		prev.SQL.Store = StoreAset
	}
	if len(cmd.words) > 0 {
		prev.SQL.Prefix = cmd.words[0]
	}
	prev.Text += " " + cmd.Text
	return nil
}

// checkConditionals is pgbench's CheckConditional, and resolves the jump
// targets of \if, \elif and \else.
func (p *parser) checkConditionals() error {
	type frame struct {
		ifIdx    int
		last     int // last branch command (\if or \elif) whose next is unresolved
		branches []int
		sawElse  bool
	}
	var stack []frame
	for i, c := range p.s.Commands {
		switch c.Kind {
		case KindIf:
			stack = append(stack, frame{ifIdx: i, last: i, branches: []int{i}})
		case KindElif, KindElse:
			what := `\elif`
			if c.Kind == KindElse {
				what = `\else`
			}
			if len(stack) == 0 {
				return p.condError(c, what+` without matching \if`)
			}
			f := &stack[len(stack)-1]
			if f.sawElse {
				return p.condError(c, what+` after \else`)
			}
			p.s.Commands[f.last].next = i
			f.last = i
			f.branches = append(f.branches, i)
			if c.Kind == KindElse {
				f.sawElse = true
			}
		case KindEndIf:
			if len(stack) == 0 {
				return p.condError(c, `\endif without matching \if`)
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			p.s.Commands[f.last].next = i
			for _, b := range f.branches {
				p.s.Commands[b].endif = i
			}
		}
	}
	if len(stack) > 0 {
		c := p.s.Commands[stack[len(stack)-1].ifIdx]
		return &SyntaxError{File: p.name, Line: c.Line, Source: p.lineText(c.Line),
			Msg: fmt.Sprintf("condition error in script \"%s\" command %d: %s", p.name, len(p.s.Commands)+1, `\if without matching \endif`)}
	}
	return nil
}

func (p *parser) condError(c *Command, msg string) error {
	return &SyntaxError{File: p.name, Line: c.Line, Source: p.lineText(c.Line),
		Msg: fmt.Sprintf("condition error in script \"%s\" command %d: %s", p.name, c.index+1, msg)}
}
