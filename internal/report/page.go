package report

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/prose"
)

// page is the surface a result file's report is written on. The text and
// markdown formats draw its parts differently; what the parts say is
// written once (sweep.go, step.go).
type page interface {
	// title names the document: the result file's path.
	title(s string)
	// field is one line of the header: "workload", "target"...
	field(key, value string)
	// step starts a step's block: heading "4 clients", line its one-line
	// summary.
	step(heading, line string)
	// item is one line of evidence under a step.
	item(key, value string)
	// subtable is a table inside a step's evidence.
	subtable(t *table)
	// lines are preformatted lines, in pgbench's layout where pgbench has
	// one.
	lines(ls []string)
	// section starts a part of the document: mdTitle in markdown,
	// textLabel (may be empty: nothing) in text.
	section(mdTitle, textLabel string)
	// table is a table of the document.
	table(t *table)
	// para is a paragraph of prose.
	para(s string)
	// blank separates parts.
	blank()
}

// textPage writes for a terminal.
type textPage struct{ b *strings.Builder }

func (p textPage) title(s string) { p.b.WriteString(s + "\n") }

func (p textPage) field(key, value string) { fmt.Fprintf(p.b, "  %-9s %s\n", key+":", value) }

func (p textPage) step(_, line string) { p.b.WriteString(line + "\n") }

// item writes "  key:        value", wrapped at 96 runes under itself.
func (p textPage) item(key, value string) {
	for i, l := range prose.Wrap(value, 96) {
		k := ""
		if i == 0 {
			k = key + ":"
		}
		fmt.Fprintf(p.b, "  %-11s %s\n", k, l)
	}
}

func (p textPage) subtable(t *table) { t.text(p.b, 14) }

func (p textPage) lines(ls []string) {
	for _, l := range ls {
		p.b.WriteString(l + "\n")
	}
}

// section writes its label after a blank line; a part without a label
// follows what came before (which ends with a blank line).
func (p textPage) section(_, label string) {
	if label != "" {
		p.b.WriteString("\n" + label + "\n")
	}
}

func (p textPage) table(t *table) { t.text(p.b, 2) }

// para writes prose wrapped at 92 runes, indented by two spaces.
func (p textPage) para(s string) {
	for _, l := range prose.Wrap(s, 92) {
		p.b.WriteString("  " + l + "\n")
	}
}

func (p textPage) blank() { p.b.WriteString("\n") }

// mdPage writes GitHub-flavoured markdown. Blocks are kept one blank line
// apart (gap), however the parts follow each other.
type mdPage struct{ b *strings.Builder }

// gap ends the output so far with one blank line.
func (p mdPage) gap() {
	s := p.b.String()
	switch {
	case s == "" || strings.HasSuffix(s, "\n\n"):
	case strings.HasSuffix(s, "\n"):
		p.b.WriteString("\n")
	default:
		p.b.WriteString("\n\n")
	}
}

func (p mdPage) title(s string) { fmt.Fprintf(p.b, "# %s\n\n", mdText(s)) }

func (p mdPage) field(key, value string) { fmt.Fprintf(p.b, "- %s: %s\n", key, mdText(value)) }

func (p mdPage) step(heading, line string) {
	p.gap()
	fmt.Fprintf(p.b, "### %s\n\n%s\n\n", mdText(heading), mdText(line))
}

func (p mdPage) item(key, value string) { fmt.Fprintf(p.b, "- **%s**: %s\n", key, mdText(value)) }

func (p mdPage) subtable(t *table) {
	p.gap()
	t.markdown(p.b)
	p.b.WriteString("\n")
}

func (p mdPage) lines(ls []string) {
	if len(ls) == 0 {
		return
	}
	p.gap()
	p.b.WriteString("```\n")
	for _, l := range ls {
		p.b.WriteString(strings.ReplaceAll(l, "```", "` ` `") + "\n")
	}
	p.b.WriteString("```\n")
}

func (p mdPage) section(title, _ string) {
	p.gap()
	fmt.Fprintf(p.b, "## %s\n\n", title)
}

func (p mdPage) table(t *table) { t.markdown(p.b) }

func (p mdPage) para(s string) {
	p.gap()
	p.b.WriteString(mdText(s) + "\n")
}

func (p mdPage) blank() { p.gap() }
