package script

import "strconv"

// This file ports pgbench's exprscan.l: the word lexer for backslash-command
// arguments and the token lexer for \set, \if and \elif expressions. Both stop
// at the end of the line; a backslash right before a newline continues it.

type tokKind uint8

const (
	tkEOL tokKind = iota // end of the command line (newline or end of input)
	tkInt
	tkMaxIntPlusOne // 9223372036854775808, valid only after a unary minus
	tkDouble
	tkBool
	tkNull
	tkVar
	tkFunc
	tkAnd
	tkOr
	tkNot
	tkIs
	tkIsNull
	tkNotNull
	tkCase
	tkWhen
	tkThen
	tkElse
	tkEnd
	tkNE
	tkLE
	tkGE
	tkLS
	tkRS
	tkChar // single-character operator or punctuation in ch
)

type token struct {
	kind  tokKind
	ch    byte
	start int // offset of the token's first byte
	end   int // offset just past the token
	text  string
	i     int64
	d     float64
	b     bool
}

func isExprSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' }

func isAlpha(c byte) bool { return isIdentStart(c) }
func isAlnum(c byte) bool { return isIdentStart(c) || isDigit(c) }

// continuation reports the length of a line continuation (\ CR? LF) at p, or 0.
func continuation(src string, p int) int {
	if p < len(src) && src[p] == '\\' {
		if p+1 < len(src) && src[p+1] == '\n' {
			return 2
		}
		if p+2 < len(src) && src[p+1] == '\r' && src[p+2] == '\n' {
			return 3
		}
	}
	return 0
}

// lexWord reads one whitespace-separated word of a backslash command. It
// returns ok=false, having consumed the newline, at the end of the command.
func lexWord(src string, pos *int) (word string, start int, ok bool) {
	p := *pos
	for p < len(src) {
		c := src[p]
		if isExprSpace(c) {
			p++
			continue
		}
		if n := continuation(src, p); n > 0 {
			p += n
			continue
		}
		if c == '\n' {
			*pos = p + 1
			return "", -1, false
		}
		// a word: nonspace+, but a trailing continuation is not part of it
		q := p
		for q < len(src) && !isExprSpace(src[q]) && src[q] != '\n' {
			if n := continuation(src, q); n > 0 && q > p {
				*pos = q + n
				return src[p:q], p, true
			}
			q++
		}
		*pos = q
		return src[p:q], p, true
	}
	*pos = p
	return "", -1, false
}

type exprLexer struct {
	src string
	pos int
	// lastEnd is the end offset of the last token read (for error carets).
	lastEnd int
	eol     bool // the newline (or end of input) has been consumed
	err     *lexError
}

type lexError struct {
	msg    string
	more   string
	detail string // what was found and what was expected, for syntax errors
	at     int    // offset pgbench's caret points at
}

func (l *exprLexer) next() token {
	src := l.src
	for l.pos < len(src) {
		c := src[l.pos]
		if isExprSpace(c) {
			l.pos++
			continue
		}
		if n := continuation(src, l.pos); n > 0 {
			l.pos += n
			continue
		}
		break
	}
	p := l.pos
	if p >= len(src) {
		l.eol = true
		l.lastEnd = p
		return token{kind: tkEOL, start: p, end: p}
	}
	c := src[p]
	tok := token{start: p}
	switch {
	case c == '\n':
		l.pos++
		l.eol = true
		tok.kind = tkEOL
	case c == '<' || c == '>' || c == '!':
		l.pos++
		n := byte(0)
		if l.pos < len(src) {
			n = src[l.pos]
		}
		switch {
		case c == '<' && n == '>', c == '!' && n == '=':
			l.pos++
			tok.kind = tkNE
		case c == '<' && n == '=':
			l.pos++
			tok.kind = tkLE
		case c == '>' && n == '=':
			l.pos++
			tok.kind = tkGE
		case c == '<' && n == '<':
			l.pos++
			tok.kind = tkLS
		case c == '>' && n == '>':
			l.pos++
			tok.kind = tkRS
		case c == '!':
			l.fail("unexpected character", "!", p)
			tok.kind = tkEOL
		default:
			tok.kind, tok.ch = tkChar, c
		}
	case c == '+' || c == '-' || c == '*' || c == '/' || c == '%' || c == '=' ||
		c == '|' || c == '&' || c == '#' || c == '~' || c == '(' || c == ')' || c == ',':
		l.pos++
		tok.kind, tok.ch = tkChar, c
	case c == ':':
		q := p + 1
		for q < len(src) && isAlnum(src[q]) {
			q++
		}
		if q == p+1 {
			l.pos++
			l.fail("unexpected character", ":", p)
			tok.kind = tkEOL
			break
		}
		l.pos = q
		tok.kind, tok.text = tkVar, src[p+1:q]
	case isDigit(c) || (c == '.' && p+1 < len(src) && isDigit(src[p+1])):
		l.number(&tok)
	case isAlpha(c):
		q := p
		for q < len(src) && isAlnum(src[q]) {
			q++
		}
		l.pos = q
		w := src[p:q]
		tok.text = w
		tok.kind = keyword(w)
		if tok.kind == tkBool {
			tok.b = len(w) == 4
		}
	default:
		l.pos++
		l.fail("unexpected character", src[p:p+1], p)
		tok.kind = tkEOL
	}
	tok.end = l.pos
	l.lastEnd = l.pos
	return tok
}

func keyword(w string) tokKind {
	switch len(w) {
	case 2:
		if equalFoldASCII(w, "or") {
			return tkOr
		}
		if equalFoldASCII(w, "is") {
			return tkIs
		}
	case 3:
		if equalFoldASCII(w, "and") {
			return tkAnd
		}
		if equalFoldASCII(w, "not") {
			return tkNot
		}
		if equalFoldASCII(w, "end") {
			return tkEnd
		}
	case 4:
		switch {
		case equalFoldASCII(w, "case"):
			return tkCase
		case equalFoldASCII(w, "when"):
			return tkWhen
		case equalFoldASCII(w, "then"):
			return tkThen
		case equalFoldASCII(w, "else"):
			return tkElse
		case equalFoldASCII(w, "true"):
			return tkBool
		case equalFoldASCII(w, "null"):
			return tkNull
		}
	case 5:
		if equalFoldASCII(w, "false") {
			return tkBool
		}
	case 6:
		if equalFoldASCII(w, "isnull") {
			return tkIsNull
		}
	case 7:
		if equalFoldASCII(w, "notnull") {
			return tkNotNull
		}
	}
	return tkFunc
}

// number lexes {digit}+ as an integer, or a double with fraction/exponent.
func (l *exprLexer) number(tok *token) {
	src := l.src
	p := l.pos
	q := p
	for q < len(src) && isDigit(src[q]) {
		q++
	}
	isDouble := false
	if q < len(src) && src[q] == '.' {
		isDouble = true
		q++
		for q < len(src) && isDigit(src[q]) {
			q++
		}
	}
	if q < len(src) && (src[q] == 'e' || src[q] == 'E') {
		r := q + 1
		if r < len(src) && (src[r] == '+' || src[r] == '-') {
			r++
		}
		if r < len(src) && isDigit(src[r]) {
			for r < len(src) && isDigit(src[r]) {
				r++
			}
			isDouble = true
			q = r
		}
	}
	l.pos = q
	text := src[p:q]
	tok.text = text
	if !isDouble {
		if text == "9223372036854775808" {
			tok.kind = tkMaxIntPlusOne
			return
		}
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			l.fail("bigint constant overflow", text, q-1)
			tok.kind = tkEOL
			return
		}
		tok.kind, tok.i = tkInt, v
		return
	}
	d, ok, _ := strtodouble(text)
	if !ok {
		l.fail("double constant overflow", text, q-1)
		tok.kind = tkEOL
		return
	}
	tok.kind, tok.d = tkDouble, d
}

func (l *exprLexer) fail(msg, more string, at int) {
	if l.err == nil {
		l.err = &lexError{msg: msg, more: more, at: at}
	}
}

// skipToEOL consumes the rest of the command line.
func (l *exprLexer) skipToEOL() {
	for !l.eol {
		t := l.next()
		if t.kind == tkEOL && !l.eol {
			// a lexing error produced an EOL token; keep going
			continue
		}
	}
}
