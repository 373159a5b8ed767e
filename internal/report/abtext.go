package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/pgscale/pgscale/internal/stats"
)

// TextOptions configures WriteText.
type TextOptions struct {
	// Color marks significant changes green (better) or red (worse), and
	// measures outside bounds bold red, with ANSI escapes. Set it only
	// when writing to a terminal that supports colour.
	Color bool
}

// WriteText writes the comparison as a terminal table: the headline, one
// row per step and measure with the baseline's median, each candidate's
// median, change ± uncertainty, bound and status, then how the numbers
// were made and the warnings. With several candidates each gets its own
// column block against the baseline.
func WriteText(w io.Writer, r *ABReport, opt TextOptions) error {
	var b strings.Builder
	for i := range r.Verdicts {
		b.WriteString(r.CandidateHeadline(i) + "\n")
	}
	b.WriteString(methodLine(r) + "\n\n")

	header := []string{"step", "measure", r.Baseline}
	single := len(r.Candidates) == 1
	for _, c := range r.Candidates {
		if single {
			header = append(header, c, "change", "bound", "status")
		} else {
			header = append(header, c, "change", "status")
		}
	}
	t := table{header: header, right: map[int]bool{2: true}}
	for i := range r.Candidates {
		base := 3 + 3*i
		if single {
			base = 3
		}
		t.right[base], t.right[base+1] = true, true
		if single {
			t.right[base+2] = true
		}
	}
	for _, row := range r.Rows {
		cells := []cell{{text: row.Measure.Step}, {text: measureLabel(row.Measure)}, {text: FormatValue(row.Base.Median)}}
		for _, c := range row.Cells {
			a := c.Assessment
			color := ""
			if opt.Color {
				color = changeColor(a)
			}
			cells = append(cells, cell{text: FormatValue(c.Cand.Median)}, cell{text: stats.FormatChange(a.Change, a.Lo, a.Hi), color: color})
			if single {
				cells = append(cells, cell{text: boundText(a)})
			} else if a.Bound != nil {
				// Several candidates: the bound goes with the status.
				cells = append(cells, cell{text: statusText(a) + " (bound " + boundText(a) + ")", color: statusColor(a, opt.Color)})
				continue
			}
			cells = append(cells, cell{text: statusText(a), color: statusColor(a, opt.Color)})
		}
		t.rows = append(t.rows, cells)
	}
	t.write(&b)
	if notes := reportNotes(r); len(notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range notes {
			b.WriteString("  " + n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// methodLine says how the numbers were made, in one line.
func methodLine(r *ABReport) string {
	conf := 0.0
	n := 0
	if len(r.Verdicts) > 0 {
		conf = 1 - r.Verdicts[0].Alpha
		n = r.Verdicts[0].Total
	}
	var s string
	switch r.Method {
	case stats.Paired:
		turns := "whole-step turns"
		if r.SliceS > 0 {
			turns = fmt.Sprintf("%g s slices", r.SliceS)
		}
		s = fmt.Sprintf("paired by round over %d of %d rounds (%s): change = geometric mean of the per-round ratios; %s, Holm-corrected over %d measures; %g%% intervals",
			r.Rounds, r.RoundsPlanned, turns, stats.PairedTest, n, 100*conf)
	default:
		s = fmt.Sprintf("unpaired (each complete step of a file counts as one value): change of the medians; %s, Holm-corrected over %d measures; %g%% intervals; drift between runs is not cancelled",
			stats.UnpairedTest, n, 100*conf)
	}
	if r.Incomplete != "" {
		s += "; INCOMPLETE: " + r.Incomplete
	}
	return s
}

// reportNotes returns the report's notes, then the warnings of its
// comparisons with the same message merged: "tps@c=1, p99@c=1: 4 rounds
// are too few ...".
func reportNotes(r *ABReport) []string {
	out := append([]string(nil), r.Notes...)
	var errs []error
	for _, v := range r.Verdicts {
		errs = append(errs, v.Warnings...)
		for _, a := range v.Assessments {
			for _, w := range a.Warnings {
				var sw *stats.Warning
				if errors.As(w, &sw) && sw.Kind == stats.Unpaired {
					continue // said once in the method line
				}
				errs = append(errs, w)
			}
		}
	}
	return append(out, mergeWarnings(errs)...)
}

// mergeWarnings merges warnings that differ only in the measure key they
// start with ("KEY: message"), keeping the order of first appearance.
func mergeWarnings(errs []error) []string {
	var order []string
	keys := map[string][]string{}
	for _, e := range errs {
		msg := e.Error()
		key, rest, ok := strings.Cut(msg, ": ")
		if !ok || strings.ContainsAny(key, " ") {
			key, rest = "", msg
		}
		if _, seen := keys[rest]; !seen {
			order = append(order, rest)
		}
		if key != "" && !contains(keys[rest], key) {
			keys[rest] = append(keys[rest], key)
		} else if keys[rest] == nil {
			keys[rest] = []string{}
		}
	}
	out := make([]string, len(order))
	for i, rest := range order {
		if ks := keys[rest]; len(ks) > 0 {
			out[i] = strings.Join(ks, ", ") + ": " + rest
		} else {
			out[i] = rest
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func measureLabel(m stats.Measure) string {
	if m.Unit == "" {
		return m.Name
	}
	return m.Name + " (" + m.Unit + ")"
}

// FormatValue prints a measured value with about four significant digits
// and no exponent: 15234, 812.5, 1.234, 0.045.
func FormatValue(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 10:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func boundText(a stats.Assessment) string {
	if a.Bound == nil {
		return ""
	}
	s := stats.FormatPercent(a.Bound.Limit())
	return strings.Replace(s, ".0%", "%", 1)
}

// statusText is the bound's status (with "uncertain" when the interval
// reaches across the bound) and, for significant changes, their effect.
func statusText(a stats.Assessment) string {
	var parts []string
	if a.Bound != nil {
		parts = append(parts, a.Status.String())
		if a.Uncertain {
			parts = append(parts, "uncertain")
		}
		if a.Status == stats.WithinBounds && a.Effect != stats.NoChange {
			parts = append(parts, a.Effect.String())
		}
	} else {
		parts = append(parts, a.Effect.String())
	}
	return strings.Join(parts, ", ")
}

const (
	ansiReset   = "\x1b[0m"
	ansiGreen   = "\x1b[32m"
	ansiRed     = "\x1b[31m"
	ansiBoldRed = "\x1b[1;31m"
)

func changeColor(a stats.Assessment) string {
	switch {
	case a.Status == stats.OutsideBounds:
		return ansiBoldRed
	case a.Effect == stats.Improved:
		return ansiGreen
	case a.Effect == stats.Regressed:
		return ansiRed
	}
	return ""
}

func statusColor(a stats.Assessment, on bool) string {
	if on && a.Status == stats.OutsideBounds {
		return ansiBoldRed
	}
	return ""
}

// table aligns plain-text columns and colours cells after padding, so
// escape sequences never upset the alignment.
type table struct {
	header []string
	right  map[int]bool // right-aligned columns
	rows   [][]cell
}

type cell struct {
	text  string
	color string
}

func (t *table) write(b *strings.Builder) {
	width := make([]int, len(t.header))
	for i, h := range t.header {
		width[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c.text))
		}
	}
	line := func(cells []cell) {
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c.text))
			text := c.text
			if t.right[i] {
				text = pad + c.text
			} else if i < len(cells)-1 {
				text += pad
			}
			if c.color != "" {
				text = c.color + text + ansiReset
			}
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(text)
		}
		b.WriteString("\n")
	}
	hc := make([]cell, len(t.header))
	for i, h := range t.header {
		hc[i] = cell{text: h}
	}
	line(hc)
	for _, r := range t.rows {
		line(r)
	}
}
