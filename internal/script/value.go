package script

import (
	"math"
	"strconv"
	"strings"
)

// valueType mirrors pgbench's PgBenchValueType.
type valueType uint8

const (
	tNone valueType = iota // no value (a variable known only as a string)
	tNull
	tBool
	tInt
	tDouble
)

// value is an evaluated pgbench value: NULL, boolean, bigint or double.
type value struct {
	t valueType
	b bool
	i int64
	d float64
}

func nullValue() value            { return value{t: tNull} }
func boolValue(b bool) value      { return value{t: tBool, b: b} }
func intValue(i int64) value      { return value{t: tInt, i: i} }
func doubleValue(d float64) value { return value{t: tDouble, d: d} }

// typeName is pgbench's valueTypeName.
func (v value) typeName() string {
	switch v.t {
	case tNull:
		return "null"
	case tBool:
		return "boolean"
	case tInt:
		return "int"
	case tDouble:
		return "double"
	}
	return "none"
}

// truth is pgbench's valueTruth, used by \if, \elif and CASE.
func (v value) truth() bool {
	switch v.t {
	case tBool:
		return v.b
	case tInt:
		return v.i != 0
	case tDouble:
		return v.d != 0
	}
	return false
}

// appendText appends the value as pgbench's getVariable prints it:
// NULL, true/false, %lld, or %.15g.
func (v value) appendText(dst []byte) []byte {
	switch v.t {
	case tNull:
		return append(dst, "NULL"...)
	case tBool:
		if v.b {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case tInt:
		return strconv.AppendInt(dst, v.i, 10)
	case tDouble:
		return appendG15(dst, v.d)
	}
	return dst
}

// appendSpecial formats NaN and infinities as PostgreSQL's own snprintf
// does (pgbench links it in place of the C library's).
func appendSpecial(dst []byte, f float64) ([]byte, bool) {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...), true
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...), true
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...), true
	}
	return dst, false
}

// appendG15 formats f as pgbench's printf("%.15g") does.
func appendG15(dst []byte, f float64) []byte {
	if d, ok := appendSpecial(dst, f); ok {
		return d
	}
	return strconv.AppendFloat(dst, f, 'g', 15, 64)
}

// appendCFloat formats f as pgbench's printf("%f") does.
func appendCFloat(dst []byte, f float64) []byte {
	if d, ok := appendSpecial(dst, f); ok {
		return d
	}
	return strconv.AppendFloat(dst, f, 'f', 6, 64)
}

func cFloat(f float64) string { return string(appendCFloat(nil, f)) }

// isAnInt is pgbench's is_an_int: ^\s*[-+]?[0-9]+$ (an empty digit run
// after the sign is accepted, as in pgbench).
func isAnInt(s string) bool {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i < len(s) && !isDigit(s[i]) {
		return false
	}
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isCSpace is C's isspace in the C locale.
func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// strtoint64 is pgbench's strtoint64: strtoi64 base 10 of the whole string.
func strtoint64(s string) (int64, error) {
	t := s
	for len(t) > 0 && isCSpace(t[0]) {
		t = t[1:]
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, errorf("value \"%s\" is out of range for type bigint", s)
		}
		return 0, errorf("invalid input syntax for type bigint: \"%s\"", s)
	}
	return v, nil
}

// strtodouble is pgbench's strtodouble (strtod of the whole string, with
// glibc's ERANGE on overflow and underflow). ok is false on any failure;
// rangeErr tells an out-of-range value from bad syntax.
func strtodouble(s string) (d float64, ok, rangeErr bool) {
	t := s
	for len(t) > 0 && isCSpace(t[0]) {
		t = t[1:]
	}
	if t == "" || !cFloatSyntax(t) {
		return 0, false, false
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return v, false, true
		}
		return 0, false, false
	}
	if v != 0 && math.Abs(v) < 0x1p-1022 {
		// glibc reports ERANGE for subnormal results.
		return v, false, true
	}
	if v == 0 && hasNonzeroMantissa(t) {
		return v, false, true
	}
	return v, true, false
}

// cFloatSyntax accepts what strtod accepts as a complete decimal, hex,
// infinity or nan literal (Go's ParseFloat accepts underscores and a few
// forms C does not; this rejects those).
func cFloatSyntax(t string) bool {
	if strings.ContainsRune(t, '_') {
		return false
	}
	u := t
	if u[0] == '+' || u[0] == '-' {
		u = u[1:]
	}
	l := strings.ToLower(u)
	switch l {
	case "inf", "infinity", "nan":
		return true
	}
	if strings.HasPrefix(l, "0x") {
		return true
	}
	return len(l) > 0 && (isDigit(l[0]) || l[0] == '.')
}

func hasNonzeroMantissa(t string) bool {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == 'e' || c == 'E' || c == 'p' || c == 'P' {
			return false
		}
		if c >= '1' && c <= '9' {
			return true
		}
	}
	return false
}

// hasPrefixFold reports whether s is a case-insensitive prefix of word
// (pg_strncasecmp(s, word, len(s)) == 0 with len(s) <= len(word)).
func prefixOfFold(s, word string) bool {
	if len(s) > len(word) {
		// pg_strncasecmp compares up to len(s) bytes; word's NUL differs.
		return false
	}
	return strings.EqualFold(s, word[:len(s)])
}
