package script

import "fmt"

// exprParser is a precedence-climbing parser equivalent to exprparse.y,
// including its associativity and its non-associative comparisons.
type exprParser struct {
	lex  exprLexer
	tok  token
	err  *lexError
	vars *varTable
}

// Binding powers, lowest to highest, as in exprparse.y.
const (
	precOr      = 1
	precAnd     = 2
	precNot     = 3
	precIs      = 4
	precCompare = 5
	precBit     = 6
	precAdd     = 7
	precMul     = 8
	precUnary   = 9
)

func binaryPrec(t token) int {
	switch t.kind {
	case tkOr:
		return precOr
	case tkAnd:
		return precAnd
	case tkIs, tkIsNull, tkNotNull:
		return precIs
	case tkNE, tkLE, tkGE:
		return precCompare
	case tkLS, tkRS:
		return precBit
	case tkChar:
		switch t.ch {
		case '<', '>', '=':
			return precCompare
		case '|', '#', '&':
			return precBit
		case '+', '-':
			return precAdd
		case '*', '/', '%':
			return precMul
		}
	}
	return 0
}

func (p *exprParser) advance() {
	if p.err != nil {
		return
	}
	p.tok = p.lex.next()
	if p.lex.err != nil {
		p.err = p.lex.err
	}
}

// fail records a grammar error with the caret where bison would put it:
// the last byte of the lookahead token.
func (p *exprParser) fail(msg, more string) { p.failDetail(msg, more, "") }

func (p *exprParser) failDetail(msg, more, detail string) {
	if p.err != nil {
		return
	}
	at := p.tok.end - 1
	if p.tok.kind == tkEOL {
		at = p.tok.start
	}
	if at < 0 {
		at = 0
	}
	p.err = &lexError{msg: msg, more: more, detail: detail, at: at}
}

func describeToken(t token) string {
	switch t.kind {
	case tkEOL:
		return "end of line"
	case tkChar:
		return fmt.Sprintf("%q", string(t.ch))
	case tkNE:
		return `"<>"`
	case tkLE:
		return `"<="`
	case tkGE:
		return `">="`
	case tkLS:
		return `"<<"`
	case tkRS:
		return `">>"`
	case tkVar:
		return `variable ":` + t.text + `"`
	case tkInt, tkMaxIntPlusOne:
		return "integer " + t.text
	case tkDouble:
		return "number " + t.text
	}
	return fmt.Sprintf("%q", t.text)
}

func (p *exprParser) syntaxError(expected string) {
	p.failDetail("syntax error", "", "unexpected "+describeToken(p.tok)+", expected "+expected)
}

func (p *exprParser) parse() *node {
	p.advance()
	n := p.expr(precOr)
	if p.err == nil && p.tok.kind != tkEOL {
		p.syntaxError("an operator or end of line")
	}
	return n
}

func (p *exprParser) expr(minPrec int) *node {
	left := p.prefix()
	for p.err == nil {
		prec := binaryPrec(p.tok)
		if prec == 0 || prec < minPrec {
			return left
		}
		t := p.tok
		if prec == precIs {
			left = p.postfixIs(left)
			continue
		}
		p.advance()
		right := p.expr(prec + 1)
		if p.err != nil {
			return left
		}
		left = p.binary(t, left, right)
		if prec == precCompare && binaryPrec(p.tok) == precCompare {
			p.syntaxError("an operator other than a comparison (comparisons do not associate)")
			return left
		}
	}
	return left
}

func (p *exprParser) binary(t token, l, r *node) *node {
	mk := func(name string, a, b *node) *node { return p.makeOp(name, a, b) }
	switch t.kind {
	case tkOr:
		return mk("!or", l, r)
	case tkAnd:
		return mk("!and", l, r)
	case tkNE:
		return mk("<>", l, r)
	case tkLE:
		return mk("<=", l, r)
	case tkGE:
		return mk("<=", r, l)
	case tkLS:
		return mk("<<", l, r)
	case tkRS:
		return mk(">>", l, r)
	}
	switch t.ch {
	case '>':
		return mk("<", r, l)
	case '%':
		return mk("mod", l, r)
	}
	return mk(string(t.ch), l, r)
}

func (p *exprParser) makeOp(name string, args ...*node) *node {
	i, _ := lookupFunc(name)
	return &node{op: functions[i].op, name: name, args: args}
}

func constNode(v value) *node { return &node{op: opConst, val: v} }

// postfixIs handles ISNULL, NOTNULL, IS [NOT] NULL|TRUE|FALSE.
func (p *exprParser) postfixIs(left *node) *node {
	switch p.tok.kind {
	case tkIsNull:
		p.advance()
		return p.makeOp("!is", left, constNode(nullValue()))
	case tkNotNull:
		p.advance()
		return p.makeOp("!not", p.makeOp("!is", left, constNode(nullValue())))
	}
	p.advance() // IS
	not := false
	if p.tok.kind == tkNot {
		not = true
		p.advance()
	}
	var rhs *node
	switch p.tok.kind {
	case tkNull:
		rhs = constNode(nullValue())
	case tkBool:
		rhs = constNode(boolValue(p.tok.b))
	default:
		p.syntaxError("NULL, TRUE or FALSE after IS")
		return left
	}
	p.advance()
	n := p.makeOp("!is", left, rhs)
	if not {
		n = p.makeOp("!not", n)
	}
	return n
}

func (p *exprParser) prefix() *node {
	if p.err != nil {
		return nil
	}
	t := p.tok
	switch t.kind {
	case tkChar:
		switch t.ch {
		case '(':
			p.advance()
			n := p.expr(precOr)
			if p.err != nil {
				return n
			}
			if p.tok.kind != tkChar || p.tok.ch != ')' {
				p.syntaxError(`")"`)
				return n
			}
			p.advance()
			return n
		case '+':
			p.advance()
			return p.expr(precUnary + 1)
		case '-':
			p.advance()
			if p.tok.kind == tkMaxIntPlusOne {
				p.advance()
				return constNode(intValue(-1 << 63))
			}
			operand := p.expr(precUnary + 1)
			return p.makeOp("-", constNode(intValue(0)), operand)
		case '~':
			p.advance()
			operand := p.expr(precBit + 1)
			return p.makeOp("#", constNode(intValue(-1)), operand)
		}
	case tkNot:
		p.advance()
		operand := p.expr(precNot + 1)
		return p.makeOp("!not", operand)
	case tkNull:
		p.advance()
		return constNode(nullValue())
	case tkBool:
		p.advance()
		return constNode(boolValue(t.b))
	case tkInt:
		p.advance()
		return constNode(intValue(t.i))
	case tkDouble:
		p.advance()
		return constNode(doubleValue(t.d))
	case tkVar:
		p.advance()
		return p.variable(t.text)
	case tkFunc:
		return p.call()
	case tkCase:
		return p.caseExpr()
	}
	p.syntaxError("an operand")
	return nil
}

func (p *exprParser) variable(name string) *node {
	return &node{op: opVar, name: name, vidx: p.vars.intern(name)}
}

func (p *exprParser) call() *node {
	name := p.tok.text
	// bison reduces the function name (and looks it up) before reading
	// the next token, so the caret is at the name's last byte.
	fi, ok := lookupFunc(name)
	if !ok {
		p.fail("unexpected function name", name)
		return nil
	}
	p.advance()
	if p.err != nil {
		return nil
	}
	if p.tok.kind != tkChar || p.tok.ch != '(' {
		p.syntaxError(`"(" after function name`)
		return nil
	}
	p.advance()
	var args []*node
	if !(p.tok.kind == tkChar && p.tok.ch == ')') {
		for p.err == nil {
			args = append(args, p.expr(precOr))
			if p.err != nil {
				return nil
			}
			if p.tok.kind == tkChar && p.tok.ch == ',' {
				p.advance()
				continue
			}
			break
		}
		if p.err != nil {
			return nil
		}
		if p.tok.kind != tkChar || p.tok.ch != ')' {
			p.syntaxError(`"," or ")"`)
			return nil
		}
	}
	// make_func runs when the rule is reduced, i.e. with ')' as the last token.
	f := functions[fi]
	switch f.nargs {
	case nargsVariable:
		if len(args) == 0 {
			p.fail("at least one argument expected", f.name)
			return nil
		}
	case nargsHash:
		if len(args) < 1 || len(args) > 2 {
			p.fail("unexpected number of arguments", f.name)
			return nil
		}
		if len(args) == 1 {
			args = append(args, p.variable("default_seed"))
		}
	case nargsPermute:
		if len(args) < 2 || len(args) > 3 {
			p.fail("unexpected number of arguments", f.name)
			return nil
		}
		if len(args) == 2 {
			args = append(args, p.variable("default_seed"))
		}
	default:
		if len(args) != f.nargs {
			p.fail("unexpected number of arguments", f.name)
			return nil
		}
	}
	p.advance()
	return &node{op: f.op, name: name, args: args}
}

func (p *exprParser) caseExpr() *node {
	p.advance() // CASE
	var args []*node
	if p.tok.kind != tkWhen {
		p.syntaxError("WHEN after CASE")
		return nil
	}
	for p.tok.kind == tkWhen && p.err == nil {
		p.advance()
		cond := p.expr(precOr)
		if p.err != nil {
			return nil
		}
		if p.tok.kind != tkThen {
			p.syntaxError("THEN")
			return nil
		}
		p.advance()
		res := p.expr(precOr)
		if p.err != nil {
			return nil
		}
		args = append(args, cond, res)
	}
	var elseN *node
	switch p.tok.kind {
	case tkElse:
		p.advance()
		elseN = p.expr(precOr)
		if p.err != nil {
			return nil
		}
		if p.tok.kind != tkEnd {
			p.syntaxError("END")
			return nil
		}
	case tkEnd:
		elseN = constNode(nullValue())
	default:
		p.syntaxError("WHEN, ELSE or END")
		return nil
	}
	p.advance()
	args = append(args, elseN)
	return &node{op: opCase, name: "!case_end", args: args}
}
