package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// scanUint64 is sscanf("%lu%c") accepting exactly one unsigned number:
// leading space, a sign (a minus wraps around, as strtoul does), digits.
func scanUint64(s string) (uint64, bool) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseIntOption is PostgreSQL's option_parse_int: strtol, trailing
// spaces allowed, then a range check; msg is its error.
func parseIntOption(arg, label string, lo int) (int, string) {
	s := strings.TrimLeft(arg, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	digits := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == digits {
		end = 0 // no number: strtol leaves endptr at the start
	}
	if strings.TrimRight(s[end:], " \t\n\v\f\r") != "" || (end == 0 && s != "") {
		return 0, fmt.Sprintf("invalid value \"%s\" for option %s", arg, label)
	}
	v, err := strconv.ParseInt(s[:end], 10, 64)
	if end == 0 {
		v, err = 0, nil
	}
	if err != nil || v < int64(lo) || v > 2147483647 {
		return 0, fmt.Sprintf("%s must be in range %d..%d", label, lo, 2147483647)
	}
	return int(v), ""
}

// atof is C's atof: the longest prefix that is a number, 0 if none.
func atof(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	for end := len(s); end > 0; end-- {
		if v, err := strconv.ParseFloat(s[:end], 64); err == nil || errors.Is(err, strconv.ErrRange) {
			return v
		}
	}
	return 0
}

// atoi is C's atoi (as glibc's strtol, truncated to int).
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	v, _ := strconv.ParseInt(s[:end], 10, 64)
	return v
}

// strerror is an OS error as C's strerror words it ("No such file or
// directory"), without Go's path prefix.
func strerror(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	s := err.Error()
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}
