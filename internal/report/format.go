package report

import (
	"fmt"
	"io"
	"strings"
)

// Format is one output format of the registry.
type Format struct {
	// Name is the --format value, and the name of the flag that writes the
	// format to a file (--markdown FILE) where the command offers it.
	Name string
	// Usage says what the format is, for help texts.
	Usage string
	// Files says the format renders result files on their own (run,
	// report); Comparisons says it renders comparisons (ab, compare).
	Files, Comparisons bool
	// Write renders the document.
	Write func(w io.Writer, d *Doc) error
}

// formats is the registry: one line per format.
var formats = []Format{
	{"text", "for a terminal", true, true, writeText},
	{"markdown", "GitHub-flavoured markdown, for a pull request or an issue", true, true, writeMarkdown},
	{"comment", "markdown in the pooler CI bot's shape: one verdict, a row per suite with throughput and the pooler's costs per transaction, the measures outside bounds, links to the HTML report's flame graphs", false, true, writeComment},
	{"verdict", "every measure's numbers, bound and status and the verdict, as JSON", false, true, writeVerdict},
	{"benchfmt", "Go benchmark format (benchstat -col target -ignore round FILE)", true, true, writeBenchfmt},
	{"bmf", "Bencher Metric Format JSON", true, true, writeBMF},
	{"html", "one self-contained HTML page with charts, opened from disk with no network", true, true, writeHTML},
	{"pgbench", "pgbench's own report at the end of a run, line for line, for each step", true, false, writePgbench},
}

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

// needComparison is the error of a format that renders comparisons only.
func needComparison(format string) error {
	return fmt.Errorf("the %s format shows a comparison: give the files of one A/B run, or use pgscale ab or compare", format)
}
