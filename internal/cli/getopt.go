package cli

import (
	"fmt"
	"strings"
)

// option is one option of a getopt_long command line.
type option struct {
	short byte   // 0: long only
	long  string // "" : short only
	arg   bool   // takes a required argument
	// exact is matched only when written in full: an option pgbench 17
	// lacks must not make its abbreviations ambiguous.
	exact bool
}

// getoptError is a command-line mistake in glibc getopt_long's words.
type getoptError struct{ msg string }

func (e *getoptError) Error() string { return e.msg }

// getopt parses args as glibc's getopt_long does for a program with
// these options: short options clustered or with their argument attached
// or next, long options as --name=value or --name value and abbreviated to
// any unique prefix, operands anywhere (they are permuted to the end) and
// "--" ending the options. It calls each option's handler in command-line
// order with its name ("c" or "client" as its canonical long name when it
// has one) and argument, and stops at the first error.
func getopt(args []string, opts []option, handle func(name, arg string) error) (operands []string, err error) {
	name := func(o *option) string {
		if o.long != "" {
			return o.long
		}
		return string(o.short)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(operands, args[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			body, value, hasValue := strings.Cut(a[2:], "=")
			o, err := findLong(opts, body, a)
			if err != nil {
				return nil, err
			}
			switch {
			case !o.arg && hasValue:
				return nil, &getoptError{fmt.Sprintf("option '--%s' doesn't allow an argument", o.long)}
			case o.arg && !hasValue:
				if i+1 >= len(args) {
					return nil, &getoptError{fmt.Sprintf("option '--%s' requires an argument", o.long)}
				}
				i++
				value = args[i]
			}
			if err := handle(name(o), value); err != nil {
				return nil, err
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				o := findShort(opts, a[j])
				if o == nil {
					return nil, &getoptError{fmt.Sprintf("invalid option -- '%c'", a[j])}
				}
				if !o.arg {
					if err := handle(name(o), ""); err != nil {
						return nil, err
					}
					continue
				}
				value := a[j+1:]
				if value == "" {
					if i+1 >= len(args) {
						return nil, &getoptError{fmt.Sprintf("option requires an argument -- '%c'", a[j])}
					}
					i++
					value = args[i]
				}
				if err := handle(name(o), value); err != nil {
					return nil, err
				}
				break
			}
		default:
			operands = append(operands, a)
		}
	}
	return operands, nil
}

func findShort(opts []option, c byte) *option {
	for i := range opts {
		if opts[i].short == c && c != 0 {
			return &opts[i]
		}
	}
	return nil
}

// findLong finds the long option named body, or the only one it is a
// prefix of; arg is the argument as written, for the messages.
func findLong(opts []option, body, arg string) (*option, error) {
	var found []*option
	for i := range opts {
		o := &opts[i]
		if o.long == "" {
			continue
		}
		if o.long == body {
			return o, nil
		}
		if strings.HasPrefix(o.long, body) && !o.exact {
			found = append(found, o)
		}
	}
	switch len(found) {
	case 0:
		return nil, &getoptError{fmt.Sprintf("unrecognized option '%s'", arg)}
	case 1:
		return found[0], nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "option '%s' is ambiguous; possibilities:", arg)
	for _, o := range found {
		fmt.Fprintf(&b, " '--%s'", o.long)
	}
	return nil, &getoptError{b.String()}
}
