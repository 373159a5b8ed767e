package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/pgscale/pgscale/internal/micro"
	"github.com/pgscale/pgscale/internal/report/html"
	"github.com/pgscale/pgscale/internal/stats"
)

// microText writes a micro-benchmark run's analysis for a terminal: what
// ran and how long, then per candidate the bot's headline, the verdict,
// every measure's row, the groups and why each measure outside its bound
// is there.
func microText(b *strings.Builder, m *micro.Analysis, color bool) {
	if m.Name != "" {
		fmt.Fprintf(b, "micro cell %s: ", m.Name)
	}
	fmt.Fprintf(b, "micro-benchmarks: %s (%s format), %s\n", m.Command, m.Format, microRounds(m))
	fmt.Fprintf(b, "  times: %s\n", microTimes(m))
	if m.Counted != "" {
		fmt.Fprintf(b, "  counted: %s\n", m.Counted)
	}
	for _, u := range m.Unused {
		fmt.Fprintf(b, "  not used: %s\n", u)
	}
	for _, p := range m.Problems {
		fmt.Fprintf(b, "  incomplete: %s\n", p)
	}
	for _, c := range m.Candidates {
		fmt.Fprintf(b, "\n%s against %s: Microbench: %s\n", c.Name, m.Targets[0], c.Headline())
		fmt.Fprintf(b, "  verdict: %s\n", c.Verdict.Headline())
		t := newTable("benchmark", "measure", m.Targets[0], c.Name, "change", "bound", "status").alignRight(2, 3, 4, 5)
		for _, r := range c.Rows {
			change := cell{text: stats.FormatChange(r.Change, r.Lo, r.Hi)}
			status := cell{text: r.StatusText()}
			if color {
				change.color, status.color = changeColor(r.Assessment), statusColor(r.Assessment)
			}
			t.rows = append(t.rows, []cell{{text: r.Bench}, {text: r.Unit}, {text: FormatValue(r.Base)}, {text: FormatValue(r.Cand)}, change, {text: boundText(r.Assessment)}, status})
		}
		t.text(b, 2)
		if len(c.Groups) > 0 {
			b.WriteString("  groups:\n")
			for _, g := range c.Groups {
				fmt.Fprintf(b, "    %s\n", g.Line())
			}
		}
		if out := c.Outside(); len(out) > 0 {
			b.WriteString("  outside bounds, and why:\n")
			for _, r := range out {
				fmt.Fprintf(b, "    %s %s %s: %s\n", r.Outcome, r.Bench, r.Unit, r.OutcomeWhy())
			}
		}
	}
}

// microMarkdown writes the pooler bot's micro section: the count within
// bounds, the table of the measures outside them, the group lines.
func microMarkdown(b *strings.Builder, m *micro.Analysis) {
	for _, c := range m.Candidates {
		name := "Microbench"
		if m.Name != "" {
			name += " " + mdEscape(m.Name)
		}
		fmt.Fprintf(b, "%s **%s** (%s against %s): %s\n\n", outcomeMark(c.Verdict.Outcome), name, mdEscape(c.Name), mdEscape(m.Targets[0]), mdEscape(c.Headline()))
		if out := c.Outside(); len(out) > 0 {
			fmt.Fprintf(b, "| benchmark | measure | %s | %s | change | bound | status |\n| --- | --- | --: | --: | --: | --: | --- |\n", mdEscape(m.Targets[0]), mdEscape(c.Name))
			for _, r := range out {
				fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %s | %s %s |\n", mdCode(r.Bench), mdText(r.Unit), FormatValue(r.Base), FormatValue(r.Cand),
					stats.FormatChange(r.Change, r.Lo, r.Hi), boundText(r.Assessment), outcomeMark(r.Outcome), mdText(r.OutcomeWhy()))
			}
			b.WriteString("\n")
		}
		for _, g := range c.Groups {
			fmt.Fprintf(b, "- %s\n", mdText(g.Line()))
		}
		if len(c.Groups) > 0 {
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(b, "Micro-benchmarks: `%s` (%s format), %s; times: %s.\n", mdCode(m.Command), m.Format, microRounds(m), microTimes(m))
	if m.Counted != "" {
		fmt.Fprintf(b, "Counted: %s.\n", mdText(m.Counted))
	}
	for _, u := range m.Unused {
		fmt.Fprintf(b, "Not used: %s.\n", mdText(u))
	}
	for _, p := range m.Problems {
		fmt.Fprintf(b, "\n⚠️ incomplete: %s\n", mdText(p))
	}
}

// microRounds says how many rounds ran and in what order.
func microRounds(m *micro.Analysis) string {
	s := fmt.Sprintf("%d rounds", m.Rounds)
	if m.Rounds == 1 {
		s = "1 round"
	}
	if m.RoundsMax > 0 {
		s += fmt.Sprintf(" of up to %d", m.RoundsMax)
		if m.Stopped != "" {
			s += fmt.Sprintf(" (rounds until decided: %s)", m.Stopped)
		}
	}
	return s + ", " + strings.Join(m.Targets, " and ") + " interleaved"
}

// microTimes says how long each target's runs of the command took.
func microTimes(m *micro.Analysis) string {
	var parts []string
	for i, t := range m.Targets {
		parts = append(parts, fmt.Sprintf("%s %.1f s", t, m.Seconds[i]))
	}
	return strings.Join(parts, ", ")
}

// htmlMicro lays the micro-benchmark runs out for the page: one table per
// run and candidate, the failed and inconclusive measures first, then the
// rest by change, largest first.
func htmlMicro(ms []*micro.Analysis) []html.Micro {
	var out []html.Micro
	for _, m := range ms {
		for _, c := range m.Candidates {
			title := c.Name + " against " + m.Targets[0]
			if m.Name != "" {
				title = "micro cell " + m.Name + ": " + title
			}
			hm := html.Micro{Title: title, Outcome: c.Verdict.Outcome.Verdict(), Class: outcomeClass(c.Verdict.Outcome),
				Headline: "Microbench: " + c.Headline(), Baseline: m.Targets[0], Name: c.Name, Problems: m.Problems,
				Footnote: fmt.Sprintf("%s (%s format), %s; times: %s.", m.Command, m.Format, microRounds(m), microTimes(m))}
			rows := append([]micro.Row(nil), c.Rows...)
			rank := func(o stats.Outcome) int {
				switch o {
				case stats.Fail:
					return 0
				case stats.Inconclusive:
					return 1
				}
				return 2
			}
			sort.SliceStable(rows, func(i, j int) bool {
				if ri, rj := rank(rows[i].Outcome), rank(rows[j].Outcome); ri != rj {
					return ri < rj
				}
				return rows[i].Change > rows[j].Change || !math.IsNaN(rows[i].Change) && math.IsNaN(rows[j].Change)
			})
			for _, r := range rows {
				hm.Rows = append(hm.Rows, html.MicroRow{Bench: r.Bench, Unit: r.Unit, Base: FormatValue(r.Base), Cand: FormatValue(r.Cand),
					Change: stats.FormatChange(r.Change, r.Lo, r.Hi), Bound: boundText(r.Assessment), Status: r.StatusText(),
					ChangeValue: r.Change, Improved: r.Effect == stats.Improved, Regressed: r.Effect == stats.Regressed,
					Outside: r.Outcome == stats.Fail || r.Outcome == stats.Inconclusive, Title: r.OutcomeWhy()})
			}
			for _, g := range c.Groups {
				hm.Groups = append(hm.Groups, g.Line())
			}
			out = append(out, hm)
		}
	}
	return out
}
