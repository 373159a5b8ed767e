package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Format is one output format of the registry.
type Format struct {
	// Name is the --format value, and the name of the flag that writes the
	// format to a file (--markdown FILE) where the command offers it.
	Name string
	// Usage says what the format is, for help texts.
	Usage string
	// Ext is the file name extension of what it writes, without a dot
	// (bisect.md beside a bisect's log).
	Ext string
	// Kinds are the kinds of document it lays out (Shows).
	Kinds []Kind
	// Write renders the document.
	Write func(w io.Writer, d *Doc) error
}

// formats is the registry: one line per format.
var formats = []Format{
	{"text", "for a terminal", "txt", all, writeText},
	{"markdown", "GitHub-flavoured markdown, for a pull request or an issue", "md", kinds(analyses, KindBisect), writeMarkdown},
	{"comment", "markdown in the pooler CI bot's shape: one verdict, a row per suite with throughput and the pooler's costs per transaction, the measures outside bounds, links to the HTML report's flame graphs", "md", judged, writeComment},
	{"verdict", "every measure's numbers, bound and status and the verdict, as JSON", "json", judged, writeVerdict},
	{"benchfmt", "Go benchmark format (benchstat -col target -ignore round FILE)", "txt", measured, writeBenchfmt},
	{"bmf", "Bencher Metric Format JSON", "json", measured, writeBMF},
	{"html", "one self-contained HTML page with charts, opened from disk with no network", "html", kinds(analyses, KindBisect, KindHistory), writeHTML},
	{"pgbench", "pgbench's own report at the end of a run, line for line, for each step", "txt", []Kind{KindFiles}, writePgbench},
}

// The kinds the formats show: every analysis of result files (and
// micro-benchmarks); what a verdict is of; what has measures to export;
// everything.
var (
	analyses = []Kind{KindFiles, KindComparison, KindNoise, KindSuite, KindMicro}
	judged   = []Kind{KindComparison, KindSuite, KindMicro}
	measured = []Kind{KindFiles, KindComparison, KindSuite}
	all      = kinds(analyses, KindBisect, KindHistory, KindCheck, KindSeries)
)

// kinds is ks and more.
func kinds(ks []Kind, more ...Kind) []Kind { return append(append([]Kind(nil), ks...), more...) }

// Shows says whether the format lays out documents of kind k.
func (f Format) Shows(k Kind) bool { return slices.Contains(f.Kinds, k) }

// Formats lists the registered formats, in registry order.
func Formats() []Format { return append([]Format(nil), formats...) }

// Lookup returns the format called name ("md" is markdown).
func Lookup(name string) (Format, error) {
	if name == "md" {
		name = "markdown"
	}
	for _, f := range formats {
		if f.Name == name {
			return f, nil
		}
	}
	return Format{}, fmt.Errorf("unknown report format %q (want %s)", name, Names(func(Format) bool { return true }))
}

// Names lists the names of the formats keep accepts, "a, b or c".
func Names(keep func(Format) bool) string {
	var ns []string
	for _, f := range formats {
		if keep(f) {
			ns = append(ns, f.Name)
		}
	}
	if len(ns) < 2 {
		return strings.Join(ns, "")
	}
	return strings.Join(ns[:len(ns)-1], ", ") + " or " + ns[len(ns)-1]
}

// notShown is the error of a format asked to lay out a kind of document
// it does not show.
func notShown(format string, d *Doc) error {
	return fmt.Errorf("the %s format does not show %s", format, d.Kind())
}

// needComparison is the error of a format that renders comparisons only.
func needComparison(format string) error {
	return fmt.Errorf("the %s format shows a comparison: give the files of one A/B run, or use pgscale ab or compare", format)
}
