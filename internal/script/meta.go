package script

import "strings"

// backslash parses a backslash command; bs is the offset of the backslash and
// sc.pos is just after it. It returns nil for a lone backslash.
func (p *parser) backslash(sc *sqlScanner, bs int) (*Command, error) {
	src := p.src
	pos := sc.pos
	word, _, ok := lexWord(src, &pos)
	if !ok {
		sc.pos = pos
		return nil, nil
	}
	line := p.lineOf(bs)
	cmd := &Command{Line: line, setVar: -1, next: -1, endif: -1, verb: word}
	name := word
	kind, known := metaKind(word)
	firstLine := func(end int) string {
		// pgbench's first_line: the command text from the backslash, trailing newline trimmed
		if end > len(src) {
			end = len(src)
		}
		return strings.TrimRight(src[bs:end], "\r\n")
	}
	cmdErr := func(msg, more string, at int) error {
		return p.errAt(at, line, commandMsg(msg, more, name))
	}
	exprErr := func(e *lexError) error {
		m := commandMsg(e.msg, e.more, name)
		if e.detail != "" {
			m += ": " + e.detail
		}
		return p.errAt(e.at, line, m)
	}
	if known && (kind == KindSet || kind == KindIf || kind == KindElif) {
		cmd.Kind = kind
		if kind == KindSet {
			v, _, ok := lexWord(src, &pos)
			if !ok {
				sc.pos = pos
				return nil, p.errAt(-1, line, commandMsg("missing argument", "", name))
			}
			cmd.setName = v
			cmd.setVar = p.s.vars.intern(v)
		}
		ep := &exprParser{lex: exprLexer{src: src, pos: pos}, vars: &p.s.vars}
		n := ep.parse()
		if ep.err != nil {
			ep.lex.skipToEOL()
			sc.pos = ep.lex.pos
			return nil, exprErr(ep.err)
		}
		sc.pos = ep.lex.pos
		cmd.expr = n
		cmd.firstLn = firstLine(sc.pos)
		cmd.Text = collapse(strings.ReplaceAll(cmd.firstLn, "\\\n", " "))
		return cmd, nil
	}
	var words []string
	var offs []int
	for {
		w, off, ok := lexWord(src, &pos)
		if !ok {
			break
		}
		if len(words)+1 >= maxArgs {
			sc.pos = pos
			for {
				if _, _, ok := lexWord(src, &sc.pos); !ok {
					break
				}
			}
			return nil, p.errAt(-1, line, commandMsg("too many arguments", "", name))
		}
		words = append(words, w)
		offs = append(offs, off)
	}
	sc.pos = pos
	cmd.words = words
	cmd.firstLn = firstLine(pos)
	cmd.Text = collapse(strings.ReplaceAll(cmd.firstLn, "\\\n", " "))
	if !known {
		return nil, p.errAt(-1, line, commandMsg("invalid command", "", name))
	}
	cmd.Kind = kind
	switch kind {
	case KindSleep:
		if len(words) < 1 {
			return nil, p.errAt(-1, line, commandMsg("missing argument", "", name))
		}
		if len(words) > 2 {
			return nil, cmdErr("too many arguments", "", offs[2])
		}
		arg := words[0]
		sl := sleepArg{vidx: -1}
		if len(words) == 2 {
			sl.unit = words[1]
		}
		if arg[0] == ':' {
			sl.name = arg[1:]
			sl.vidx = p.s.vars.intern(arg[1:])
		} else {
			c := 0
			if c < len(arg) && (arg[c] == '+' || arg[c] == '-') {
				c++
			}
			haveDigit := c < len(arg) && isDigit(arg[c])
			for c < len(arg) && isDigit(arg[c]) {
				c++
			}
			if c < len(arg) {
				if len(words) == 1 && haveDigit {
					sl.unit = arg[c:]
					offs = append(offs, offs[0]+c)
				} else {
					return nil, cmdErr("invalid sleep time, must be an integer", arg, offs[0])
				}
			}
			sl.literal = arg
		}
		if sl.unit != "" || len(words) == 2 {
			u := sl.unit
			if !equalFoldASCII(u, "us") && !equalFoldASCII(u, "ms") && !equalFoldASCII(u, "s") {
				return nil, cmdErr("unrecognized time unit, must be us, ms or s", u, offs[1])
			}
		}
		cmd.sleep = sl
	case KindSetShell:
		if len(words) < 2 {
			return nil, p.errAt(-1, line, commandMsg("missing argument", "", name))
		}
		cmd.setName = words[0]
		cmd.setVar = p.s.vars.intern(words[0])
		cmd.shell = p.shellArgs(words[1:])
	case KindShell:
		if len(words) < 1 {
			return nil, p.errAt(-1, line, commandMsg("missing command", "", name))
		}
		cmd.shell = p.shellArgs(words)
	case KindElse, KindEndIf, KindStartPipeline, KindEndPipeline, KindSyncPipeline:
		if len(words) != 0 {
			return nil, p.errAt(-1, line, commandMsg("unexpected argument", "", name))
		}
	case kindGset, kindAset:
		if len(words) > 1 {
			return nil, p.errAt(-1, line, commandMsg("too many arguments", "", name))
		}
	}
	return cmd, nil
}

func (p *parser) shellArgs(words []string) []shellArg {
	args := make([]shellArg, len(words))
	for i, w := range words {
		a := shellArg{vidx: -1, name: w, lit: w}
		if w[0] == ':' {
			if len(w) > 1 && w[1] == ':' {
				a.lit = w[1:]
			} else {
				a.vidx = p.s.vars.intern(w[1:])
			}
		}
		args[i] = a
	}
	return args
}

func metaKind(w string) (Kind, bool) {
	switch {
	case equalFoldASCII(w, "set"):
		return KindSet, true
	case equalFoldASCII(w, "setshell"):
		return KindSetShell, true
	case equalFoldASCII(w, "shell"):
		return KindShell, true
	case equalFoldASCII(w, "sleep"):
		return KindSleep, true
	case equalFoldASCII(w, "if"):
		return KindIf, true
	case equalFoldASCII(w, "elif"):
		return KindElif, true
	case equalFoldASCII(w, "else"):
		return KindElse, true
	case equalFoldASCII(w, "endif"):
		return KindEndIf, true
	case equalFoldASCII(w, "gset"):
		return kindGset, true
	case equalFoldASCII(w, "aset"):
		return kindAset, true
	case equalFoldASCII(w, "startpipeline"):
		return KindStartPipeline, true
	case equalFoldASCII(w, "syncpipeline"):
		return KindSyncPipeline, true
	case equalFoldASCII(w, "endpipeline"):
		return KindEndPipeline, true
	}
	return 0, false
}
