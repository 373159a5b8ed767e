package report

import (
	"strings"
	"unicode/utf8"
)

// table is a table of cells, aligned for a terminal or written as a
// markdown table: the one aligner every report uses.
type table struct {
	head  []string
	right map[int]bool // right-aligned columns
	rows  [][]cell
}

// cell is one table cell. color is an ANSI escape that text output puts
// around it after padding, so escapes never upset the alignment; md, when
// set, is the cell's markdown as is (markup around escaped text) instead
// of its escaped text.
type cell struct {
	text  string
	color string
	md    string
}

func newTable(head ...string) *table { return &table{head: head, right: map[int]bool{}} }

// alignRight right-aligns the given columns.
func (t *table) alignRight(cols ...int) *table {
	for _, c := range cols {
		t.right[c] = true
	}
	return t
}

// row adds a row of plain cells.
func (t *table) row(cells ...string) {
	r := make([]cell, len(cells))
	for i, c := range cells {
		r[i] = cell{text: c}
	}
	t.rows = append(t.rows, r)
}

// text writes the table aligned, every line indented by indent spaces,
// two spaces between columns, no trailing space.
func (t *table) text(b *strings.Builder, indent int) {
	width := make([]int, len(t.head))
	for i, h := range t.head {
		width[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c.text))
		}
	}
	pad := strings.Repeat(" ", indent)
	line := func(cells []cell) {
		var l strings.Builder
		l.WriteString(pad)
		for i, c := range cells {
			fill := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c.text))
			text := c.text
			if t.right[i] {
				text = fill + text
			} else if i < len(cells)-1 {
				text += fill
			}
			if c.color != "" {
				text = c.color + text + ansiReset
			}
			if i > 0 {
				l.WriteString("  ")
			}
			l.WriteString(text)
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteString("\n")
	}
	head := make([]cell, len(t.head))
	for i, h := range t.head {
		head[i] = cell{text: h}
	}
	line(head)
	for _, r := range t.rows {
		line(r)
	}
}

// markdown writes the table as a GitHub-flavoured markdown table, every
// cell escaped.
func (t *table) markdown(b *strings.Builder) {
	head := make([]string, len(t.head))
	for i, h := range t.head {
		head[i] = mdText(h)
	}
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for i := range t.head {
		if t.right[i] {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		cs := make([]string, len(r))
		for i, c := range r {
			cs[i] = mdText(c.text)
			if c.md != "" {
				cs[i] = c.md
			}
		}
		b.WriteString("| " + strings.Join(cs, " | ") + " |\n")
	}
}

const (
	ansiReset   = "\x1b[0m"
	ansiGreen   = "\x1b[32m"
	ansiRed     = "\x1b[31m"
	ansiBoldRed = "\x1b[1;31m"
)
