package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/prose"
)

// readSplit is where one row's statements went, for the baseline and a
// candidate: each server behind them, with its share over the row's rounds
// (compare.Point.Upstreams).
type readSplit struct {
	row, clients string
	base, cand   []compare.UpstreamShare
}

// readSplits are a comment row's splits at each of its steps ("c=4"),
// where the baseline or the candidate had several servers behind it.
func readSplits(row string, files []compare.FileAnalysis, base, cand string, steps []string) []readSplit {
	var out []readSplit
	for _, step := range steps {
		n, err := strconv.Atoi(strings.TrimPrefix(step, "c="))
		if err != nil {
			continue
		}
		rs := readSplit{row: row, clients: strconv.Itoa(n), base: upstreamsAt(files, base, n), cand: upstreamsAt(files, cand, n)}
		if rs.base != nil || rs.cand != nil {
			out = append(out, rs)
		}
	}
	return out
}

// upstreamsAt is the named target's split at n clients, nil without one.
func upstreamsAt(files []compare.FileAnalysis, name string, n int) []compare.UpstreamShare {
	for _, f := range files {
		if f.Name != name {
			continue
		}
		for _, p := range f.Points {
			if p.Clients == n {
				return p.Upstreams
			}
		}
	}
	return nil
}

// readSplitMarkdown writes where the reads went, a row per cell and client
// count, for a comment: a load-balanced cell shows its pooler's split
// between the primary and the replicas, a pooled one that everything
// reached the primary.
func readSplitMarkdown(b *strings.Builder, splits []readSplit, base, cand string) {
	if len(splits) == 0 {
		return
	}
	b.WriteString("Where the statements went: each server's share over the rounds (the upstreams probe; the range is the share's smallest and largest in one round).\n\n")
	fmt.Fprintf(b, "| suite | clients | %s | %s |\n| --- | --: | --- | --- |\n", mdEscape(base), mdEscape(cand))
	for _, s := range splits {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdEscape(s.row), s.clients, mdEscape(shareText(s.base)), mdEscape(shareText(s.cand)))
	}
	b.WriteString("\n")
}

// shareText writes a split: "primary 34% (27–41%), replica1 66% (59–73%)".
func shareText(us []compare.UpstreamShare) string {
	if us == nil {
		return "–"
	}
	parts := make([]string, len(us))
	for i, u := range us {
		p := upstreamLabel(u) + " " + prose.Share(u.Share)
		if u.Hi-u.Lo >= 0.05 {
			p += fmt.Sprintf(" (%s–%s)", strings.TrimSuffix(prose.Share(u.Lo), "%"), prose.Share(u.Hi))
		}
		parts[i] = p
	}
	return strings.Join(parts, ", ")
}

// upstreamLabel names a server by its role: "primary", or a replica by
// its place ("replica1", from "base.s1-replica1"); the whole name where
// the role says too little.
func upstreamLabel(u compare.UpstreamShare) string {
	if u.Role == "replica" {
		if i := strings.LastIndex(u.Name, "-replica"); i >= 0 {
			return u.Name[i+1:]
		}
		return u.Name
	}
	if u.Role == "primary" && !strings.Contains(u.Name, ",") {
		return "primary"
	}
	return u.Name
}
