package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
)

// writeText writes the document for a terminal: the noise of an A/A run,
// else the comparison, else every file's sweep.
func writeText(w io.Writer, d *Doc) error {
	if d.Analysis == nil {
		d = &Doc{Analysis: &compare.Analysis{}, Color: d.Color, Outputs: d.Outputs}
	}
	var b strings.Builder
	switch {
	case d.Suite != nil:
		suiteText(&b, d.Suite, d.Color)
	case d.Noise != nil:
		noiseText(&b, d.Noise)
	case d.Comparison != nil:
		comparisonText(&b, d.Comparison, d.Color)
	case d.Micro != nil:
	default:
		writeSweeps(textPage{&b}, d)
	}
	for _, m := range d.Micro {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		microText(&b, m, d.Color)
	}
	if len(d.Micro) > 0 && (d.Suite != nil || d.Comparison != nil) {
		fmt.Fprintf(&b, "\nverdict over the macro and the micro cells: %s\n", d.Analysis.Outcome().Verdict())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdown writes the document as GitHub-flavoured markdown: the
// comparison as a pull-request comment, else every file's sweep.
func writeMarkdown(w io.Writer, d *Doc) error {
	if d.Analysis == nil {
		d = &Doc{Analysis: &compare.Analysis{}, Color: d.Color, Outputs: d.Outputs}
	}
	var b strings.Builder
	switch {
	case d.Suite != nil:
		suiteMarkdown(&b, d.Suite)
	case d.Noise != nil:
		b.WriteString("```\n")
		noiseText(&b, d.Noise)
		b.WriteString("```\n")
	case d.Comparison != nil:
		comparisonMarkdown(&b, d.Comparison)
	case d.Micro != nil:
	default:
		writeSweeps(mdPage{&b}, d)
	}
	for _, m := range d.Micro {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		microMarkdown(&b, m)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSweeps writes every file of the document as a sweep.
func writeSweeps(p page, d *Doc) {
	for i, fa := range d.Files {
		if i > 0 {
			p.blank()
		}
		writeSweep(p, fa)
	}
}
