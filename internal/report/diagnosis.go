package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/pgscale/pgscale/internal/result"
)

// Diagnosis prints a sweep's diagnosis for a terminal: one line per step
// with its verdict, then the paragraph, wrapped.
func Diagnosis(w io.Writer, d *result.Diagnosis) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "diagnosis:")
	for i, v := range d.Steps {
		var marks []string
		if i == d.Knee {
			marks = append(marks, "knee")
		}
		if i == d.Peak && len(d.Steps) > 1 {
			marks = append(marks, "peak")
		}
		mark := ""
		if len(marks) > 0 {
			mark = "  (" + strings.Join(marks, ", ") + ")"
		}
		line := fmt.Sprintf("  %4d client%-1s  %-13s", v.Clients, plural(v.Clients), v.Verdict)
		if v.Detail != "" {
			line += "  " + v.Detail
		}
		fmt.Fprintln(w, line+mark)
	}
	fmt.Fprintln(w)
	for _, l := range wrap(d.Paragraph, 92) {
		fmt.Fprintln(w, "  "+l)
	}
}

// wrap breaks text into lines of at most width runes, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	var cur strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		wl := len([]rune(word))
		if n > 0 && n+1+wl > width {
			lines = append(lines, cur.String())
			cur.Reset()
			n = 0
		}
		if n > 0 {
			cur.WriteByte(' ')
			n++
		}
		cur.WriteString(word)
		n += wl
	}
	if n > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
