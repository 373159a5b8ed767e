package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/pgscale/pgscale/internal/micro"
)

// writeText writes the document for a terminal: a bisect's log or the
// history's values; else the noise of an A/A run, a suite, a comparison
// or every file's sweep, then the micro-benchmarks.
func writeText(w io.Writer, d *Doc) error {
	var b strings.Builder
	switch k := d.Kind(); k {
	case KindBisect:
		return writeBisect(w, d.Bisect)
	case KindHistory:
		return writeHistoryText(w, d.History)
	case KindCheck:
		return writeCheck(w, d.Check)
	case KindSeries:
		return writeSeries(w, d.Series)
	case KindSuite:
		suiteText(&b, d.Suite, d.Color)
	case KindNoise:
		noiseText(&b, d.Noise)
	case KindComparison:
		comparisonText(&b, d.Comparison, d.Color)
	case KindFiles:
		writeSweeps(textPage{&b}, d.analyzed())
	}
	writeMicro(&b, d, func(m *micro.Analysis) { microText(&b, m, d.Color) })
	if k := d.Kind(); len(d.micro()) > 0 && (k == KindSuite || k == KindComparison) {
		fmt.Fprintf(&b, "\nverdict over the macro and the micro cells: %s\n", d.Analysis.Outcome().Verdict())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdown writes the document as GitHub-flavoured markdown: a
// bisect's log for an issue; else a suite or a comparison as a
// pull-request comment, the noise of an A/A run or every file's sweep,
// then the micro-benchmarks.
func writeMarkdown(w io.Writer, d *Doc) error {
	var b strings.Builder
	switch d.Kind() {
	case KindBisect:
		return writeBisectMarkdown(w, d.Bisect)
	case KindSuite:
		suiteMarkdown(&b, d.Suite)
	case KindNoise:
		b.WriteString("```\n")
		noiseText(&b, d.Noise)
		b.WriteString("```\n")
	case KindComparison:
		comparisonMarkdown(&b, d.Comparison)
	case KindFiles:
		writeSweeps(mdPage{&b}, d.analyzed())
	case KindMicro:
	default:
		return notShown("markdown", d)
	}
	writeMicro(&b, d, func(m *micro.Analysis) { microMarkdown(&b, m) })
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMicro writes each micro-benchmark run of the document with write,
// apart from what came before.
func writeMicro(b *strings.Builder, d *Doc, write func(*micro.Analysis)) {
	for _, m := range d.micro() {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		write(m)
	}
}

// micro is the document's micro-benchmark runs, none without an analysis.
func (d *Doc) micro() []*micro.Analysis {
	if d.Analysis == nil {
		return nil
	}
	return d.Micro
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
