package script

import (
	"fmt"
	"strings"
)

// SyntaxError is a script error with its place. Error() is one line
// "bench.sql:3:12: message", followed by the offending line and a caret
// under the column.
type SyntaxError struct {
	File   string // script name as given to Parse
	Line   int    // 1-based line, 0 when the error concerns the whole script
	Column int    // 1-based byte column, 0 when unknown
	Msg    string // what is wrong, in pgbench's words where pgbench has some
	Source string // the offending line, without its newline
}

// Error formats the error with its place, line and caret.
func (e *SyntaxError) Error() string {
	var b strings.Builder
	switch {
	case e.Line == 0:
		fmt.Fprintf(&b, "%s: %s", e.File, e.Msg)
	case e.Column == 0:
		fmt.Fprintf(&b, "%s:%d: %s", e.File, e.Line, e.Msg)
	default:
		fmt.Fprintf(&b, "%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	if e.Line > 0 && e.Source != "" {
		b.WriteString("\n")
		b.WriteString(e.Source)
		if e.Column > 0 {
			b.WriteString("\n")
			for i := 0; i < e.Column-1 && i < len(e.Source); i++ {
				if e.Source[i] == '\t' {
					b.WriteByte('\t')
				} else {
					b.WriteByte(' ')
				}
			}
			for i := len(e.Source); i < e.Column-1; i++ {
				b.WriteByte(' ')
			}
			b.WriteString("^ error found here")
		}
	}
	return b.String()
}

// RuntimeError is an error while interpreting a command, after which pgbench
// aborts the client (or, for SQL-level failures, the transaction).
type RuntimeError struct {
	Script string // script name
	Line   int    // line of the failing command
	Msg    string // pgbench's message
	// Verb and Failed are what pgbench's abort line says of a failed
	// meta-command: "client 0 aborted in command 4 (Verb) of script 0;
	// Failed" — the meta-command's name and "evaluation of meta-command
	// failed" or the like. Both are empty for errors storing a query's
	// results (\gset, \aset).
	Verb, Failed string
}

// Error returns "bench.sql:3: division by zero".
func (e *RuntimeError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.Script, e.Line, e.Msg)
}

// evalError is an evaluation failure before it is placed in a script.
type evalError struct{ msg string }

func (e *evalError) Error() string { return e.msg }

func errorf(format string, args ...any) error {
	return &evalError{msg: fmt.Sprintf(format, args...)}
}
