package script

import (
	"fmt"
	"io"
	"strings"
)

// Describe prints the script as understood: each command with its index,
// line and kind, expressions fully parenthesised, SQL with $n placeholders
// and the variable bound to each, \gset/\aset targets and jump targets.
func (s *Script) Describe(w io.Writer) {
	fmt.Fprintf(w, "script %s (weight %d, %d commands)\n", s.Name, s.Weight, len(s.Commands))
	for i, c := range s.Commands {
		var b strings.Builder
		s.describeCommand(&b, i, c)
		for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			fmt.Fprintln(w, strings.TrimRight(l, " "))
		}
	}
}

func (s *Script) describeCommand(w *strings.Builder, i int, c *Command) {
	{
		fmt.Fprintf(w, "%3d  line %-4d %-13s ", i, c.Line, c.Kind)
		switch c.Kind {
		case KindSQL:
			q := c.SQL
			fmt.Fprintf(w, "%s\n", strings.TrimSpace(q.Prepared))
			for j, n := range q.pnames {
				fmt.Fprintf(w, "%24s$%d = :%s\n", "", j+1, n)
			}
			if q.Statements > 1 {
				fmt.Fprintf(w, "%24s%d statements, sent as one simple query whatever -M says\n", "", q.Statements)
			}
			switch q.Store {
			case StoreGset:
				fmt.Fprintf(w, "%24s\\gset into %s<column>\n", "", q.Prefix)
			case StoreAset:
				fmt.Fprintf(w, "%24s\\aset into %s<column>\n", "", q.Prefix)
			}
		case KindSet:
			fmt.Fprintf(w, ":%s = %s\n", c.setName, c.expr)
		case KindIf, KindElif:
			fmt.Fprintf(w, "%s  (false: goto %d, endif %d)\n", c.expr, c.next, c.endif)
		case KindElse:
			fmt.Fprintf(w, "(endif %d)\n", c.endif)
		case KindSleep:
			sl := c.sleep
			arg := sl.literal
			if sl.vidx >= 0 {
				arg = ":" + sl.name
			}
			unit := sl.unit
			if unit == "" {
				unit = "s"
			}
			fmt.Fprintf(w, "%s %s\n", arg, strings.ToLower(unit))
		case KindSetShell:
			fmt.Fprintf(w, ":%s = output of %s\n", c.setName, shellText(c.shell))
		case KindShell:
			fmt.Fprintf(w, "%s\n", shellText(c.shell))
		default:
			fmt.Fprintln(w)
		}
	}
}

func shellText(args []shellArg) string {
	parts := make([]string, len(args))
	for i, a := range args {
		if a.vidx >= 0 {
			parts[i] = a.name
		} else {
			parts[i] = fmt.Sprintf("%q", a.lit)
		}
	}
	return strings.Join(parts, " ")
}
