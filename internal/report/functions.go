package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/prose"
)

// functionRow is one function the per-function tests of a counted
// comparison named (diagnose.FunctionChange), with the suite's cell it
// is in ("" outside suites), as the comment, the markdown and the HTML
// list it.
type functionRow struct {
	Cell string
	diagnose.FunctionChange
}

// maxFunctionRows is how many changed functions the comment and the
// markdown list for a candidate; the verdict file lists them all.
const maxFunctionRows = 8

// changedFunctions are candidate ci's functions that changed in a
// comparison, in the analysis' order, each with the cell given.
func changedFunctions(c *compare.Comparison, ci int, cell string) []functionRow {
	if c == nil || ci >= len(c.Why) {
		return nil
	}
	var out []functionRow
	for _, f := range c.Why[ci].ChangedFunctions() {
		out = append(out, functionRow{Cell: cell, FunctionChange: f})
	}
	return out
}

// functionsTested says whether candidate ci's comparison tested functions
// one by one (a counted run whose files hold counts per function).
func functionsTested(c *compare.Comparison, ci int) bool {
	return c != nil && ci < len(c.Why) && len(c.Why[ci].Functions) > 0
}

// functionsLeadText is the sentence above the table of functions that
// changed; functionsLead the same in markdown.
func functionsLeadText() string {
	return "Functions that changed, " + functionsHow()
}

func functionsLead() string { return "**Functions that changed**, " + functionsHow() }

func functionsHow() string {
	return fmt.Sprintf("own instructions per transaction (each function tested on its own, paired over the rounds or cluster layouts, Holm-corrected; named from %.0f instructions and %.0f%% of its count, whatever the totals did):",
		diagnose.MinFunctionDelta, 100*diagnose.MinFunctionShare)
}

// functionsNone is the line of a counted comparison whose per-function
// tests named no function.
func functionsNone() string {
	return fmt.Sprintf("No function's own instructions per transaction changed (each tested on its own; named from %.0f instructions and %.0f%% of its count).",
		diagnose.MinFunctionDelta, 100*diagnose.MinFunctionShare)
}

// functionsMarkdown writes the functions that changed as a markdown table,
// at most maxFunctionRows of them: with a first column cellTitle when it
// is not "" (a suite's cells, the comment's workload), and each function
// linked to link(row) when that is not "".
func functionsMarkdown(b *strings.Builder, rows []functionRow, cellTitle string, link func(functionRow) string) {
	b.WriteString(functionsLead() + "\n\n")
	head, rule := "|", "|"
	if cellTitle != "" {
		head, rule = "| "+cellTitle+" |", "| --- |"
	}
	b.WriteString(head + " clients | process | function | before → after | change | of the total |\n")
	b.WriteString(rule + " --: | --- | --- | --: | --: | --- |\n")
	for _, r := range rows[:min(len(rows), maxFunctionRows)] {
		if cellTitle != "" {
			fmt.Fprintf(b, "| %s ", mdEscape(r.Cell))
		}
		fn := "`" + mdCode(r.Name()) + "`"
		if l := link(r); l != "" {
			fn = fmt.Sprintf("[%s](%s)", fn, l)
		}
		fmt.Fprintf(b, "| %d | %s | %s | %.1f → %.1f | %s (%s) | %s |\n", r.Clients, mdEscape(r.Process), fn, r.Base, r.Cand,
			mdEscape(r.DeltaText()), mdEscape(r.RelativeText()), mdEscape(orDash(r.PartText())))
	}
	if n := len(rows) - maxFunctionRows; n > 0 {
		fmt.Fprintf(b, "\nand %s more (the verdict file's `why.functions` lists every one).\n", prose.Count(n, "function"))
	}
	b.WriteString("\n")
}

// functionsHeadline is what the comment's title adds for the functions
// that changed: "; 1 function changed: release_server +11 a transaction
// (pooler, 1 client)"; "" when none did.
func functionsHeadline(rows []functionRow) string {
	if len(rows) == 0 {
		return ""
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Process+"\x00"+r.Function+"\x00"+r.Object] = true
	}
	top := rows[0]
	for _, r := range rows[1:] {
		if math.Abs(r.Delta) > math.Abs(top.Delta) {
			top = r
		}
	}
	return fmt.Sprintf("; %s changed: %s %s a transaction (%s, %s)", prose.Count(len(seen), "function"), top.Name(), top.DeltaText(), top.Process,
		prose.Count(top.Clients, "client"))
}

// orDash is s, or "–" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// noLink links a function to nothing: a format that writes no page
// beside it.
func noLink(functionRow) string { return "" }
