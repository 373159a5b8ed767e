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
