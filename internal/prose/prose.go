// Package prose holds the few wording helpers of everything that writes
// sentences for people — reports and diagnoses: plurals, shares and
// wrapping, so that they read the same everywhere.
package prose

import (
	"fmt"
	"strings"
)

// Plural is "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Count is n and the noun, in the plural unless n is 1: "1 client",
// "4 clients".
func Count(n int, noun string) string { return fmt.Sprintf("%d %s%s", n, noun, Plural(n)) }

// Share formats a share (0..1) as a whole percentage; a small non-zero one
// is "<1%".
func Share(x float64) string {
	if x > 0 && x < 0.005 {
		return "<1%"
	}
	return fmt.Sprintf("%.0f%%", x*100)
}

// Wrap breaks text into lines of at most width runes, at spaces.
func Wrap(text string, width int) []string {
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

// Command writes a command line for people to read and paste: each word
// as it is, or in single quotes when a shell would split or expand it.
func Command(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
