package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/report/html"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// writeBisect writes a bisect's log as text: what it found, each commit
// that carries the change with the change it carries, its why and its
// diff stat, then the steps and the commits.
func writeBisect(w io.Writer, b *result.Bisect) error {
	var s strings.Builder
	s.WriteString(BisectHeadline(b) + "\n\n")
	fmt.Fprintf(&s, "bisect of %s (%s of %s), %s..%s: %s, judged by %s@%s (%s)\n",
		b.Target, b.What, b.Source, b.Good, b.Bad, prose.Count(len(b.Commits)-1, "commit"), b.Measure, b.Step, bisectSense(b))
	if c := b.Change; c != nil {
		fmt.Fprintf(&s, "the change: %s from %s (good) to %s (bad)%s\n", bisectChange(c), c.From, c.To, bisectValues(b, b.Commits[0].Hash, b.Commits[len(b.Commits)-1].Hash))
	}
	if d := bisectData(b); d != "" {
		s.WriteString("data: " + d + "\n")
	}
	for i, c := range b.Culprits {
		s.WriteString("\n")
		head := "first bad commit"
		if len(b.Culprits) > 1 {
			head = fmt.Sprintf("part %d of %d", i+1, len(b.Culprits))
		}
		fmt.Fprintf(&s, "%s: %s\n  %s\n", head, c.Commit.Hash, c.Commit.Subject)
		fmt.Fprintf(&s, "  carries %s (%s of the change) against its parent %s%s\n", bisectChange(&c.Change), bisectShare(c.Share), shortHash(c.Parent),
			bisectValues(b, c.Parent, c.Commit.Hash))
		writeBisectWhy(&s, &c.Change, "  ")
		for _, l := range strings.Split(strings.TrimRight(c.DiffStat, "\n"), "\n") {
			s.WriteString("  " + l + "\n")
		}
	}
	for _, u := range b.Unresolved {
		fmt.Fprintf(&s, "\nunresolved: %s..%s (after %s): %s\n", shortHash(u.First), shortHash(u.Last), shortHash(u.After), u.Why)
	}
	writeBisectSteps(&s, b)
	s.WriteString("\ncommits (in order; the value is the measure's geometric mean where measured):\n")
	for _, c := range b.Commits {
		v := "–"
		if c.Value != nil {
			v = FormatValue(*c.Value)
		}
		status := c.Status
		if status == "" {
			status = "-"
		}
		fmt.Fprintf(&s, "  %s  %-14s  %12s  %s\n", c.Short(), status, v, c.Subject)
	}
	if !b.Complete && b.Reason != "" {
		fmt.Fprintf(&s, "\nincomplete: %s\n", b.Reason)
	}
	_, err := io.WriteString(w, s.String())
	return err
}

// BisectHeadline sums a bisect up in one line; when a commit it names
// was classified by a step whose commits each made data of their own on
// one cluster, it says that the change may be the data's.
func BisectHeadline(b *result.Bisect) string {
	h := bisectHeadline(b)
	if (b.Outcome == result.BisectFound || b.Outcome == result.BisectSplit) && len(uncoveredSteps(b)) > 0 {
		h += fmt.Sprintf(" (but %s ran each commit on data of its own on one cluster: a change may be the data's, not the code's)",
			stepList(uncoveredSteps(b)))
	}
	return h
}

// uncoveredSteps are the complete steps whose changes may be their
// data's (result.BisectStep.DataUncovered).
func uncoveredSteps(b *result.Bisect) []int {
	var out []int
	for _, st := range b.Steps {
		if st.Complete && st.DataUncovered() {
			out = append(out, st.N)
		}
	}
	return out
}

// stepList names steps: "step 2", "steps 0 and 3".
func stepList(ns []int) string {
	var parts []string
	for _, n := range ns {
		parts = append(parts, fmt.Sprint(n))
	}
	if len(ns) == 1 {
		return "step " + parts[0]
	}
	return "steps " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// bisectData says what a counted bisect's steps ran their commits on:
// copies of one data (a change is the code's), and on how many layouts;
// or data of their own, and what that leaves out; "" when no step says.
func bisectData(b *result.Bisect) string {
	copies, own, layouts := 0, 0, 0
	var why []string
	for _, st := range b.Steps {
		switch st.Data {
		case result.BisectDataCopies:
			copies++
		case result.BisectDataOwn:
			own++
			if st.DataWhy != "" && !slices.Contains(why, st.DataWhy) {
				why = append(why, st.DataWhy)
			}
		default:
			continue
		}
		if layouts == 0 || st.Layouts < layouts {
			layouts = st.Layouts
		}
	}
	var parts []string
	switch {
	case copies > 0 && layouts > 1:
		parts = append(parts, fmt.Sprintf("%s ran the commits on byte-identical copies of one data per cluster layout (made by the lower commit), %d layouts or more: a change is the code's, its interval covers the layouts' data", stepsCount(copies), layouts))
	case copies > 0:
		parts = append(parts, fmt.Sprintf("%s ran the commits on byte-identical copies of one cluster's data (made by the lower commit): a change is the code's on that data; the interval does not cover data made again", stepsCount(copies)))
	}
	if own > 0 {
		p := fmt.Sprintf("%s ran each commit on data of its own (%s)", stepsCount(own), strings.Join(why, "; "))
		if n := len(uncoveredSteps(b)); n > 0 {
			p += fmt.Sprintf(", %d of them on one cluster layout: their changes include what each one's data built differently, which their intervals do not cover", n)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// stepsCount is "1 step" or "N steps".
func stepsCount(n int) string { return prose.Count(n, "step") }

// bisectHeadline is the headline without what it says of the data.
func bisectHeadline(b *result.Bisect) string {
	switch {
	case !b.Complete:
		return fmt.Sprintf("pgscale bisect: incomplete after %s", prose.Count(len(b.Steps), "step"))
	case b.Outcome == result.BisectFound:
		c := b.Culprits[0]
		return fmt.Sprintf("pgscale bisect: %s carries the change (%s %s): %s", c.Commit.Short(), b.Measure, bisectChange(&c.Change), c.Commit.Subject)
	case b.Outcome == result.BisectSplit:
		var parts []string
		for _, c := range b.Culprits {
			parts = append(parts, fmt.Sprintf("%s %s", c.Commit.Short(), bisectChange(&c.Change)))
		}
		for _, u := range b.Unresolved {
			parts = append(parts, fmt.Sprintf("%s..%s unresolved", shortHash(u.First), shortHash(u.Last)))
		}
		return fmt.Sprintf("pgscale bisect: the change is split over %s: %s", prose.Count(len(parts), "place"), strings.Join(parts, "; "))
	case b.Outcome == result.BisectNoChange:
		return fmt.Sprintf("pgscale bisect: the ends do not differ beyond %s: %s %s", bisectPct(b.MinChange), b.Measure, bisectChange(b.Change))
	case b.Outcome == result.BisectUndecided:
		return fmt.Sprintf("pgscale bisect: the ends could not be told apart: %s %s", b.Measure, bisectChange(b.Change))
	}
	return "pgscale bisect: no commit could be named: the change lies in a range whose commits could not be built or classified"
}

// writeBisectWhy writes a change's why: its sentences and the functions.
func writeBisectWhy(s *strings.Builder, c *result.BisectChange, indent string) {
	for i, l := range c.Why {
		lead := indent + "      "
		if i == 0 {
			lead = indent + "why:  "
		}
		s.WriteString(lead + l + "\n")
	}
	if len(c.Functions) > 0 {
		var fs []string
		for _, f := range c.Functions {
			fs = append(fs, bisectFunction(f))
		}
		s.WriteString(indent + "functions: " + strings.Join(fs, "; ") + "\n")
	}
}

// bisectFunction is one function's part: "standard_ExecutorStart +448
// (1203 → 1651, 99%)".
func bisectFunction(f result.BisectFunction) string {
	where := ""
	if f.Inside {
		where = "inside "
	}
	return fmt.Sprintf("%s%s %+.0f (%s → %s, %s)", where, f.Function, f.Delta, FormatValue(f.Base), FormatValue(f.Cand), bisectShare(f.Share))
}

// bisectTimes adds up the steps' building and measuring.
func bisectTimes(b *result.Bisect) string {
	var build, measure float64
	for _, st := range b.Steps {
		build, measure = build+st.BuildS, measure+st.MeasureS
	}
	return fmt.Sprintf("%s, %v: building %v, measuring %v", prose.Count(len(b.Steps), "step"), bisectDur(build+measure), bisectDur(build), bisectDur(measure))
}

// bisectSteps is the steps as a table: each commit, what it was measured
// against, how it was classified, the changes from and to the ends of its
// interval, its rounds, its build and measure times, and what was left.
func bisectSteps(b *result.Bisect) *table {
	t := newTable("#", "commit", "against", "class", "from lo", "to hi", "rounds", "build", "measure", "left").alignRight(0, 4, 5, 6, 8)
	for _, st := range b.Steps {
		against, class := shortHash(st.Lo)+".."+shortHash(st.Hi), st.Class
		if st.Hi == "" {
			against, class = shortHash(st.Lo), "ends"
			if st.Class == result.BisectNeither {
				class = "ends (no change)"
			}
		}
		if !st.Complete {
			class = "incomplete"
		}
		t.row(fmt.Sprint(st.N), shortHash(st.Commit), against, class, bisectChange(st.FromLo), bisectChange(st.ToHi),
			fmt.Sprint(st.Rounds), bisectBuild(st), bisectDur(st.MeasureS).String(), fmt.Sprintf("%d commits, ~%s", st.Left, prose.Count(st.StepsLeft, "step")))
	}
	return t
}

// writeBisectSteps writes the steps as a table, with their times.
func writeBisectSteps(s *strings.Builder, b *result.Bisect) {
	fmt.Fprintf(s, "\nsteps (%s):\n", bisectTimes(b))
	bisectSteps(b).text(s, 2)
}

// writeBisectMarkdown writes a bisect's log as markdown for an issue
// comment: the headline, each commit that carries the change with its
// why and diff stat, and the steps in a table.
func writeBisectMarkdown(w io.Writer, b *result.Bisect) error {
	var s strings.Builder
	fmt.Fprintf(&s, "### %s\n\n", mdEscape(BisectHeadline(b)))
	fmt.Fprintf(&s, "Bisect of `%s` (%s), `%s..%s`: %s, judged by **%s@%s** (%s).\n", b.Target, mdEscape(b.What), b.Good, b.Bad,
		prose.Count(len(b.Commits)-1, "commit"), b.Measure, b.Step, bisectSense(b))
	if c := b.Change; c != nil {
		fmt.Fprintf(&s, "The change: **%s** from `%s` (good) to `%s` (bad)%s.\n", bisectChange(c), c.From, c.To, bisectValues(b, b.Commits[0].Hash, b.Commits[len(b.Commits)-1].Hash))
	}
	if d := bisectData(b); d != "" {
		fmt.Fprintf(&s, "Data: %s.\n", mdEscape(d))
	}
	for i, c := range b.Culprits {
		head := "First bad commit"
		if len(b.Culprits) > 1 {
			head = fmt.Sprintf("Part %d of %d", i+1, len(b.Culprits))
		}
		fmt.Fprintf(&s, "\n**%s:** `%s` %s\n\n", head, c.Commit.Hash, mdEscape(c.Commit.Subject))
		fmt.Fprintf(&s, "- carries **%s** (%s of the change) against its parent `%s`%s\n", bisectChange(&c.Change), bisectShare(c.Share), shortHash(c.Parent), bisectValues(b, c.Parent, c.Commit.Hash))
		for _, l := range c.Change.Why {
			fmt.Fprintf(&s, "- %s\n", mdEscape(l))
		}
		if len(c.Change.Functions) > 0 {
			var fs []string
			for _, f := range c.Change.Functions {
				fs = append(fs, mdEscape(bisectFunction(f)))
			}
			fmt.Fprintf(&s, "- functions: %s\n", strings.Join(fs, "; "))
		}
		fmt.Fprintf(&s, "\n```\n%s\n```\n", strings.TrimRight(c.DiffStat, "\n"))
	}
	for _, u := range b.Unresolved {
		fmt.Fprintf(&s, "\n**Unresolved:** `%s..%s` (after `%s`): %s\n", shortHash(u.First), shortHash(u.Last), shortHash(u.After), mdEscape(u.Why))
	}
	fmt.Fprintf(&s, "\n<details><summary>%s</summary>\n\n", bisectTimes(b))
	bisectSteps(b).markdown(&s)
	s.WriteString("\n</details>\n")
	if !b.Complete && b.Reason != "" {
		fmt.Fprintf(&s, "\nIncomplete: %s\n", mdEscape(b.Reason))
	}
	_, err := io.WriteString(w, s.String())
	return err
}

// bisectSense says which way is better, and whether the measure is
// counted.
func bisectSense(b *result.Bisect) string {
	s := "higher is better"
	if b.Lower {
		s = "lower is better"
	}
	if b.Counted {
		s += ", counted under Valgrind"
	}
	return s + ", smallest change of interest " + bisectPct(b.MinChange)
}

// bisectChange writes a change with its interval.
func bisectChange(c *result.BisectChange) string {
	if c == nil {
		return "–"
	}
	return stats.FormatChange(c.Change, c.Lo, c.Hi)
}

// bisectValues writes the measure's values at two commits, where both
// were measured: ", 42981 → 43431 instructions".
func bisectValues(b *result.Bisect, from, to string) string {
	fi, ti := b.CommitIndex(from), b.CommitIndex(to)
	if fi < 0 || ti < 0 || b.Commits[fi].Value == nil || b.Commits[ti].Value == nil {
		return ""
	}
	return fmt.Sprintf(", %s → %s %s", FormatValue(*b.Commits[fi].Value), FormatValue(*b.Commits[ti].Value), b.Unit)
}

// bisectBuild says how a step's commit was built: "1m12s (configure 20s,
// make 45s)", "cached", "does not build".
func bisectBuild(st result.BisectStep) string {
	switch bl := st.Build; {
	case bl == nil:
		return bisectDur(st.BuildS).String()
	case bl.Failed != "":
		return "failed: " + bl.Failed
	case bl.Cached:
		return "cached"
	default:
		var ps []string
		for _, p := range bl.Phases {
			if p.Seconds >= 1 {
				ps = append(ps, fmt.Sprintf("%s %v", p.Name, bisectDur(p.Seconds)))
			}
		}
		if len(ps) == 0 {
			return bisectDur(st.BuildS).String()
		}
		return fmt.Sprintf("%v (%s)", bisectDur(st.BuildS), strings.Join(ps, ", "))
	}
}

// bisectShare writes a part of the change: "100%", "52%".
func bisectShare(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// bisectPct writes a fraction as a percentage.
func bisectPct(x float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", 100*x), "0"), ".") + "%"
}

// bisectDur is seconds as a rounded duration.
func bisectDur(s float64) time.Duration {
	d := time.Duration(s * float64(time.Second))
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

func shortHash(h string) string { return result.BisectCommit{Hash: h}.Short() }

// writeBisectHTML writes a bisect's log as one self-contained HTML page:
// the measure against commit order, the culprits and the steps.
func writeBisectHTML(w io.Writer, b *result.Bisect) error {
	return html.WriteBisect(w, b, BisectHeadline(b))
}
