package script

// This file ports the parts of PostgreSQL's psqlscan.l that pgbench relies on
// to cut a script into SQL commands and backslash commands: quotes, comments,
// dollar quoting, parenthesis and BEGIN ATOMIC nesting, "--" comments dropped,
// leading whitespace suppressed, \; and \: forced into the buffer, and
// :{?name} tested against an empty variable set (always FALSE).

type scanResult uint8

const (
	scanSemicolon  scanResult = iota // command-ending semicolon (included in buf)
	scanBackslash                    // a backslash starting a meta-command; pos is just after it
	scanEOL                          // end of input with a non-empty buffer
	scanIncomplete                   // end of input inside a construct, or empty buffer
)

type sqlScanner struct {
	src        string
	pos        int
	parenDepth int
	beginDepth int
	identCount int
	idents     [4]byte
	inQuote    bool // input ended inside a quote or comment
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentCont(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

func isVarChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

func isOpChar(c byte) bool {
	switch c {
	case '~', '!', '@', '#', '^', '&', '|', '`', '?', '+', '-', '*', '/', '%', '<', '>', '=':
		return true
	}
	return false
}

func isSQLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// scan appends the next piece of SQL text to buf and reports why it stopped.
// start is the offset of the first byte appended (-1 if nothing was).
func (s *sqlScanner) scan(buf []byte) (out []byte, res scanResult, start int) {
	start = -1
	emit := func(from, to int) {
		if start < 0 {
			start = from
		}
		buf = append(buf, s.src[from:to]...)
	}
	src := s.src
	for s.pos < len(src) {
		c := src[s.pos]
		p := s.pos
		switch {
		case isSQLSpace(c):
			for s.pos < len(src) && isSQLSpace(src[s.pos]) {
				s.pos++
			}
			if len(buf) > 0 {
				emit(p, s.pos)
			}
		case c == '-' && p+1 < len(src) && src[p+1] == '-':
			// "--" comment: dropped entirely.
			for s.pos < len(src) && src[s.pos] != '\n' && src[s.pos] != '\r' {
				s.pos++
			}
		case c == '/' && p+1 < len(src) && src[p+1] == '*':
			if !s.blockComment() {
				emit(p, s.pos)
				s.inQuote = true
				return buf, scanIncomplete, start
			}
			emit(p, s.pos)
		case c == '\'' || ((c == 'e' || c == 'E' || c == 'b' || c == 'B' || c == 'x' || c == 'X') && p+1 < len(src) && src[p+1] == '\''):
			esc := c == 'e' || c == 'E'
			if c != '\'' {
				s.pos++
			}
			if !s.quoted(esc) {
				emit(p, s.pos)
				s.inQuote = true
				return buf, scanIncomplete, start
			}
			emit(p, s.pos)
		case (c == 'u' || c == 'U') && p+2 < len(src) && src[p+1] == '&' && (src[p+2] == '\'' || src[p+2] == '"'):
			s.pos += 2
			var ok bool
			if src[p+2] == '\'' {
				ok = s.quoted(false)
			} else {
				ok = s.dquoted()
			}
			emit(p, s.pos)
			if !ok {
				s.inQuote = true
				return buf, scanIncomplete, start
			}
		case c == '"':
			ok := s.dquoted()
			emit(p, s.pos)
			if !ok {
				s.inQuote = true
				return buf, scanIncomplete, start
			}
		case c == '$':
			if tag, ok := s.dollarDelim(p); ok {
				s.pos = p + len(tag)
				closed := false
				for s.pos < len(src) {
					if src[s.pos] == '$' {
						if t2, ok2 := s.dollarDelim(s.pos); ok2 {
							if t2 == tag {
								s.pos += len(t2)
								closed = true
								break
							}
							// put back the final $ for rescanning
							s.pos += len(t2) - 1
							continue
						}
					}
					s.pos++
				}
				emit(p, s.pos)
				if !closed {
					s.inQuote = true
					return buf, scanIncomplete, start
				}
			} else {
				s.pos++
				emit(p, s.pos)
			}
		case c == '(':
			s.parenDepth++
			s.pos++
			emit(p, s.pos)
		case c == ')':
			if s.parenDepth > 0 {
				s.parenDepth--
			}
			s.pos++
			emit(p, s.pos)
		case c == ';':
			s.pos++
			emit(p, s.pos)
			if s.parenDepth == 0 && s.beginDepth == 0 {
				s.identCount = 0
				return buf, scanSemicolon, start
			}
		case c == '\\':
			if p+1 < len(src) && (src[p+1] == ';' || src[p+1] == ':') {
				s.pos += 2
				if start < 0 {
					start = p
				}
				buf = append(buf, src[p+1])
				if src[p+1] == ';' {
					s.identCount = 0
				}
				continue
			}
			s.pos++
			return buf, scanBackslash, start
		case c == ':':
			// ":{?name}" tests a psql variable; pgbench has none, so FALSE.
			if p+2 < len(src) && src[p+1] == '{' && src[p+2] == '?' {
				q := p + 3
				for q < len(src) && isVarChar(src[q]) {
					q++
				}
				if q > p+3 && q < len(src) && src[q] == '}' {
					s.pos = q + 1
					if start < 0 {
						start = p
					}
					buf = append(buf, "FALSE"...)
					continue
				}
			}
			s.pos++
			emit(p, s.pos)
		case isIdentStart(c):
			for s.pos < len(src) && isIdentCont(src[s.pos]) {
				s.pos++
			}
			s.identifier(src[p:s.pos])
			emit(p, s.pos)
		case isDigit(c):
			for s.pos < len(src) && isDigit(src[s.pos]) {
				s.pos++
			}
			emit(p, s.pos)
		default:
			s.pos++
			emit(p, s.pos)
		}
	}
	if s.parenDepth > 0 || s.beginDepth > 0 || len(buf) == 0 {
		return buf, scanIncomplete, start
	}
	return buf, scanEOL, start
}

// identifier tracks CREATE [OR REPLACE] FUNCTION|PROCEDURE ... BEGIN ... END
// so that semicolons inside SQL-standard function bodies do not end the command.
func (s *sqlScanner) identifier(w string) {
	if s.identCount == 0 {
		s.idents = [4]byte{}
	}
	lw := func(k string) bool { return len(w) == len(k) && equalFoldASCII(w, k) }
	if lw("create") || lw("function") || lw("procedure") || lw("or") || lw("replace") {
		if s.identCount < len(s.idents) {
			s.idents[s.identCount] = lowerASCII(w[0])
		}
	}
	s.identCount++
	id := s.idents
	if id[0] == 'c' && (id[1] == 'f' || id[1] == 'p' || (id[1] == 'o' && id[2] == 'r' && (id[3] == 'f' || id[3] == 'p'))) && s.parenDepth == 0 {
		switch {
		case lw("begin"):
			s.beginDepth++
		case lw("case"):
			if s.beginDepth >= 1 {
				s.beginDepth++
			}
		case lw("end"):
			if s.beginDepth > 0 {
				s.beginDepth--
			}
		}
	}
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

// blockComment consumes a possibly nested /* */ comment starting at pos.
func (s *sqlScanner) blockComment() bool {
	src := s.src
	s.pos += 2
	depth := 0
	for s.pos < len(src) {
		if src[s.pos] == '/' && s.pos+1 < len(src) && src[s.pos+1] == '*' {
			depth++
			s.pos += 2
			continue
		}
		if src[s.pos] == '*' {
			q := s.pos
			for q < len(src) && src[q] == '*' {
				q++
			}
			if q < len(src) && src[q] == '/' {
				s.pos = q + 1
				if depth == 0 {
					return true
				}
				depth--
				continue
			}
			s.pos = q
			continue
		}
		s.pos++
	}
	return false
}

// quoted consumes a single-quoted literal whose opening quote is at pos,
// including SQL's continuation of literals across newlines.
func (s *sqlScanner) quoted(escapes bool) bool {
	src := s.src
	s.pos++ // opening quote
	for s.pos < len(src) {
		c := src[s.pos]
		if escapes && c == '\\' {
			s.pos += 2
			if s.pos > len(src) {
				s.pos = len(src)
			}
			continue
		}
		if c == '\'' {
			if s.pos+1 < len(src) && src[s.pos+1] == '\'' {
				s.pos += 2
				continue
			}
			s.pos++
			if n := quoteContinue(src, s.pos); n > 0 {
				s.pos += n
				continue
			}
			return true
		}
		s.pos++
	}
	return false
}

// quoteContinue matches psqlscan's {quotecontinue} at p and returns its length
// (including the quote that reopens the literal), or 0.
func quoteContinue(src string, p int) int {
	q := p
	// {horiz_whitespace}*
	for q < len(src) {
		if src[q] == ' ' || src[q] == '\t' || src[q] == '\f' {
			q++
		} else if src[q] == '-' && q+1 < len(src) && src[q+1] == '-' {
			for q < len(src) && src[q] != '\n' && src[q] != '\r' {
				q++
			}
		} else {
			break
		}
	}
	if q >= len(src) || (src[q] != '\n' && src[q] != '\r') {
		return 0
	}
	q++
	// {special_whitespace}*
	for q < len(src) {
		if isSQLSpace(src[q]) {
			q++
		} else if src[q] == '-' && q+1 < len(src) && src[q+1] == '-' {
			r := q
			for r < len(src) && src[r] != '\n' && src[r] != '\r' {
				r++
			}
			if r >= len(src) {
				return 0
			}
			q = r + 1
		} else {
			break
		}
	}
	if q < len(src) && src[q] == '\'' {
		return q + 1 - p
	}
	return 0
}

// dquoted consumes a double-quoted identifier whose opening quote is at pos.
func (s *sqlScanner) dquoted() bool {
	src := s.src
	s.pos++
	for s.pos < len(src) {
		if src[s.pos] == '"' {
			if s.pos+1 < len(src) && src[s.pos+1] == '"' {
				s.pos += 2
				continue
			}
			s.pos++
			return true
		}
		s.pos++
	}
	return false
}

// dollarDelim matches $tag$ or $$ at p.
func (s *sqlScanner) dollarDelim(p int) (string, bool) {
	src := s.src
	q := p + 1
	if q < len(src) && isIdentStart(src[q]) {
		q++
		for q < len(src) && isVarChar(src[q]) {
			q++
		}
	}
	if q < len(src) && src[q] == '$' {
		return src[p : q+1], true
	}
	return "", false
}
