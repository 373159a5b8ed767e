package script

import (
	"fmt"
	"strings"
)

// opcode identifies an expression node: a constant, a variable, or one of
// pgbench's functions (operators are parsed into functions, as in pgbench).
type opcode uint8

const (
	opConst opcode = iota
	opVar
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opAbs
	opLeast
	opGreatest
	opDebug
	opPi
	opSqrt
	opLn
	opExp
	opInt
	opDouble
	opRandom
	opRandomGaussian
	opRandomExponential
	opRandomZipfian
	opPow
	opAnd
	opOr
	opNot
	opBitAnd
	opBitOr
	opBitXor
	opLShift
	opRShift
	opEQ
	opNE
	opLE
	opLT
	opIs
	opCase
	opHashMurmur2
	opHashFNV1a
	opPermute
)

const (
	nargsVariable = -1 // least, greatest: at least one
	nargsCase     = -2
	nargsHash     = -3 // one or two (seed defaults to :default_seed)
	nargsPermute  = -4 // two or three (seed defaults to :default_seed)
)

type funcDef struct {
	name  string
	nargs int
	op    opcode
}

// functions is pgbench's PGBENCH_FUNCTIONS table, in its order.
var functions = [...]funcDef{
	{"+", 2, opAdd},
	{"-", 2, opSub},
	{"*", 2, opMul},
	{"/", 2, opDiv},
	{"mod", 2, opMod},
	{"abs", 1, opAbs},
	{"least", nargsVariable, opLeast},
	{"greatest", nargsVariable, opGreatest},
	{"debug", 1, opDebug},
	{"pi", 0, opPi},
	{"sqrt", 1, opSqrt},
	{"ln", 1, opLn},
	{"exp", 1, opExp},
	{"int", 1, opInt},
	{"double", 1, opDouble},
	{"random", 2, opRandom},
	{"random_gaussian", 3, opRandomGaussian},
	{"random_exponential", 3, opRandomExponential},
	{"random_zipfian", 3, opRandomZipfian},
	{"pow", 2, opPow},
	{"power", 2, opPow},
	{"!and", 2, opAnd},
	{"!or", 2, opOr},
	{"!not", 1, opNot},
	{"&", 2, opBitAnd},
	{"|", 2, opBitOr},
	{"#", 2, opBitXor},
	{"<<", 2, opLShift},
	{">>", 2, opRShift},
	{"=", 2, opEQ},
	{"<>", 2, opNE},
	{"<=", 2, opLE},
	{"<", 2, opLT},
	{"!is", 2, opIs},
	{"!case_end", nargsCase, opCase},
	{"hash", nargsHash, opHashMurmur2},
	{"hash_murmur2", nargsHash, opHashMurmur2},
	{"hash_fnv1a", nargsHash, opHashFNV1a},
	{"permute", nargsPermute, opPermute},
}

func lookupFunc(name string) (int, bool) {
	for i := range functions {
		if equalFoldASCII(name, functions[i].name) {
			return i, true
		}
	}
	return 0, false
}

func opName(op opcode) string {
	for _, f := range functions {
		if f.op == op {
			return f.name
		}
	}
	return "?"
}

// node is one expression node.
type node struct {
	op   opcode
	val  value   // opConst
	name string  // opVar: variable name; functions: name as written
	vidx int     // opVar: index in the script's variable table
	args []*node // function arguments, in pgbench's evaluation order
}

// describe writes the expression fully parenthesised.
func (n *node) describe(b *strings.Builder) {
	switch n.op {
	case opConst:
		switch n.val.t {
		case tNull:
			b.WriteString("NULL")
		case tBool:
			if n.val.b {
				b.WriteString("TRUE")
			} else {
				b.WriteString("FALSE")
			}
		case tInt:
			fmt.Fprintf(b, "%d", n.val.i)
		case tDouble:
			s := string(appendG15(nil, n.val.d))
			if !strings.ContainsAny(s, ".en") {
				s += ".0"
			}
			b.WriteString(s)
		}
	case opVar:
		b.WriteString(":" + n.name)
	case opAdd, opSub, opMul, opDiv, opMod, opBitAnd, opBitOr, opBitXor, opLShift, opRShift,
		opEQ, opNE, opLE, opLT, opAnd, opOr:
		sym := map[opcode]string{opAdd: "+", opSub: "-", opMul: "*", opDiv: "/", opMod: "%",
			opBitAnd: "&", opBitOr: "|", opBitXor: "#", opLShift: "<<", opRShift: ">>",
			opEQ: "=", opNE: "<>", opLE: "<=", opLT: "<", opAnd: "AND", opOr: "OR"}[n.op]
		b.WriteByte('(')
		n.args[0].describe(b)
		b.WriteString(" " + sym + " ")
		n.args[1].describe(b)
		b.WriteByte(')')
	case opNot:
		b.WriteString("(NOT ")
		n.args[0].describe(b)
		b.WriteByte(')')
	case opIs:
		b.WriteByte('(')
		n.args[0].describe(b)
		b.WriteString(" IS ")
		n.args[1].describe(b)
		b.WriteByte(')')
	case opCase:
		b.WriteString("(CASE")
		i := 0
		for ; i+1 < len(n.args); i += 2 {
			b.WriteString(" WHEN ")
			n.args[i].describe(b)
			b.WriteString(" THEN ")
			n.args[i+1].describe(b)
		}
		b.WriteString(" ELSE ")
		n.args[i].describe(b)
		b.WriteString(" END)")
	default:
		b.WriteString(strings.ToLower(n.name))
		b.WriteByte('(')
		for i, a := range n.args {
			if i > 0 {
				b.WriteString(", ")
			}
			a.describe(b)
		}
		b.WriteByte(')')
	}
}

func (n *node) String() string {
	var b strings.Builder
	n.describe(&b)
	return b.String()
}

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

// varTable interns the variable names a script refers to.
type varTable struct {
	names []string
	index map[string]int
}

func (v *varTable) intern(name string) int {
	if v.index == nil {
		v.index = make(map[string]int)
	}
	if i, ok := v.index[name]; ok {
		return i
	}
	v.names = append(v.names, name)
	v.index[name] = len(v.names) - 1
	return len(v.names) - 1
}
