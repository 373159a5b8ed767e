package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
	"github.com/pgscale/pgscale/internal/store"
	"github.com/pgscale/pgscale/internal/trend"
	"github.com/pgscale/pgscale/internal/usage"
)

// filterHelp says how series are selected, for every history command.
func filterHelp() string {
	return `A FILTER is one or more terms, all of which a series must match: N (the
series numbered N in pgscale history list), workload=NAME (the workload's
name, or its whole key when quoted with its options: 'select-only -s 1 -M
prepared'), label=LABEL, c=N (clients), measure=NAME (` + measureNames() + `)
and machine=FINGERPRINT.`
}

func newHistoryCmd(stdout io.Writer) *cobra.Command {
	var location string
	cmd := &cobra.Command{
		Use:   "history list|show|check|add|export|ack",
		Short: "The run history: series across commits, trend charts, change points",
		Long: `pgscale keeps a history of result files in a store (an SQLite file by default,
PostgreSQL for teams): run and ab record what they write with --store (or
$` + store.EnvLocation + `), history add records files written before. Each file's
figures become points of series: one measure at one client count of one
workload, on one label (a line of history: main, patched) and one machine.
history check finds the change points in each series (E-Divisive means
with a t-test, as Apache Otava does) and exits 1 when one is a regression
past a --bound.

The store is --store, else $` + store.EnvLocation + `, else
$XDG_DATA_HOME/pgscale/history.db, else ~/.local/share/pgscale/history.db.

` + filterHelp(),
	}
	cmd.PersistentFlags().StringVar(&location, "store", "", storeHelp+" (default $"+store.EnvLocation+", else $XDG_DATA_HOME/pgscale/history.db or ~/.local/share/pgscale/history.db)")
	open := func(cmd *cobra.Command) (*store.Store, error) {
		return store.Open(cmd.Context(), location)
	}
	cmd.AddCommand(
		newHistoryListCmd(stdout, open),
		newHistoryShowCmd(stdout, open),
		newHistoryCheckCmd(stdout, open),
		newHistoryAddCmd(stdout, open),
		newHistoryExportCmd(stdout, open),
		newHistoryAckCmd(stdout, open),
	)
	return cmd
}

// opener opens the store the history command names.
type opener func(*cobra.Command) (*store.Store, error)

// filtered reads the FILTER terms of args and opens the store.
func (o opener) filtered(cmd *cobra.Command, args []string) (*store.Store, store.Filter, error) {
	f, err := parseFilter(args)
	if err != nil {
		return nil, f, err
	}
	st, err := o(cmd)
	return st, f, err
}

// writeOutput writes a rendered report to the file output names, or to
// stdout when it names none.
func writeOutput(stdout io.Writer, output string, b []byte) error {
	if output == "" {
		_, err := stdout.Write(b)
		return err
	}
	return result.WriteFileAtomic(output, b)
}

func newHistoryListCmd(stdout io.Writer, open opener) *cobra.Command {
	return &cobra.Command{
		Use:   "list [FILTER]",
		Short: "List the series with their point counts and newest values",
		Long:  "List the series of the store: number, key, point count, the newest value with its commit and time.\n\n" + filterHelp(),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, f, err := open.filtered(cmd, args)
			if err != nil {
				return err
			}
			defer st.Close()
			series, err := st.Series(cmd.Context(), f)
			if err != nil {
				return err
			}
			return report.WriteSeries(stdout, st.Location(), series)
		},
	}
}

func newHistoryShowCmd(stdout io.Writer, open opener) *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "show SERIES|FILTER",
		Short: "Show the points of series as a table, or as an HTML page of trend charts",
		Long: `Show every point of the matching series in time order: value, interval,
rounds, commit (or label), time, result, and the change points found. With
--format html, one self-contained page with a trend chart per series:
points with their intervals, the means between change points, change
points marked, the commit on hover.

` + filterHelp(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "html" {
				return usage.Errorf("--format %q: want text or html", format)
			}
			st, f, err := open.filtered(cmd, args)
			if err != nil {
				return err
			}
			defer st.Close()
			hs, err := st.Export(cmd.Context(), f)
			if err != nil {
				return err
			}
			if len(hs) == 0 {
				return noSeries(st, args)
			}
			h := &report.History{Store: st.Location(), Series: hs, Changes: trend.ChangePointsOf(hs, stats.ChangePointOptions{})}
			var buf bytes.Buffer
			if format == "html" {
				err = report.WriteHistoryHTML(&buf, h)
			} else {
				err = report.WriteHistoryText(&buf, h)
			}
			if err != nil {
				return err
			}
			return writeOutput(stdout, output, buf.Bytes())
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or html")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of stdout")
	return cmd
}

func newHistoryCheckCmd(stdout io.Writer, open opener) *cobra.Command {
	var bounds []string
	var confidence float64
	cmd := &cobra.Command{
		Use:   "check [FILTER]",
		Short: "Find change points in each series; exit 1 when one is a regression past a bound",
		Long: `Run change-point detection over each matching series (E-Divisive means with
a Student t-test between the segments either side, p < 0.001, as Apache
Otava does it; docs/history.md) and report every change point after the
series' acknowledged one: its size ± uncertainty, the means either side
and the commits it lies between. A change point is outside bounds when it
is past its --bound in the bad direction (tps=-2%, p99=+5%, tps@c=8=-2%).

Exit code 0 when no change point is outside its bound (without bounds,
whatever was found), 1 when one is, 2 for bad usage.

` + filterHelp(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(confidence > 0 && confidence < 1) {
				return usage.Errorf("--confidence must be between 0 and 1, e.g. 0.95")
			}
			b, err := stats.ParseBounds(bounds)
			if err != nil {
				return usage.Wrap(err)
			}
			st, f, err := open.filtered(cmd, args)
			if err != nil {
				return err
			}
			defer st.Close()
			ctx := cmd.Context()
			series, err := st.Series(ctx, f)
			if err != nil {
				return err
			}
			if len(series) == 0 && len(args) > 0 {
				return noSeries(st, args)
			}
			if len(b) > 0 && len(series) > 0 { // an empty store (a first CI run) has nothing to bound yet
				if err := compare.CheckBounds(seriesClients(series), b, stats.Options{Confidence: confidence}); err != nil {
					return usage.Wrap(err)
				}
			}
			changes, warns, err := st.Changes(ctx, f, stats.ChangePointOptions{Options: stats.Options{Confidence: confidence}})
			if err != nil {
				return err
			}
			c := &trend.Check{Store: st.Location(), Series: len(series), Changes: changes, Assessments: trend.Judge(changes, b), Warnings: warns}
			if err := report.WriteCheck(stdout, c); err != nil {
				return err
			}
			if n := len(c.Outside()); n > 0 {
				return &RegressionError{Msg: fmt.Sprintf("history check: change points outside bounds: %d", n)}
			}
			return nil
		},
	}
	registerVerdict(cmd.Flags(), &bounds, &confidence)
	return cmd
}

func newHistoryAddCmd(stdout io.Writer, open opener) *cobra.Command {
	var labels, commits []string
	cmd := &cobra.Command{
		Use:   "add FILE|DIR...",
		Short: "Record existing result files in the store",
		Long: `Record result files (a directory stands for the result files in it, a
suite's bundle for its cells' files, each cell a workload "SUITE CELL") in the
store, each whole, with its figures indexed as points. Every file is
checked first (the result schema, its rules, no password anywhere): when
one fails, nothing is stored. A file stored before is not stored again.

--label [NAME=]LABEL sets the label of the files whose target is NAME (an
A/B run's target name), or of every file without one; the default is the
file's target name, else "default". --commit [NAME=]SHA likewise sets the
commit measured; the default is the CI environment's commit
(GITHUB_SHA, CI_COMMIT_SHA, ...), else none. Give --commit when adding
files of another time.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usage.Errorf("history add needs at least one result file")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var todo []written // path and series only
			for _, a := range args {
				cells, isBundle, err := bundleFiles(a)
				if err != nil {
					return err
				}
				if isBundle {
					todo = append(todo, cells...)
					continue
				}
				paths, err := resultPaths([]string{a})
				if err != nil {
					return err
				}
				for _, p := range paths {
					todo = append(todo, written{path: p})
				}
			}
			var pending []store.Pending
			var names []string
			for _, w := range todo {
				raw, err := os.ReadFile(w.path)
				if err != nil {
					return usage.Wrap(err)
				}
				if err := store.Check(raw); err != nil {
					return usage.Errorf("%s: %v", w.path, err)
				}
				var f result.File
				if err := json.Unmarshal(raw, &f); err != nil {
					return usage.Errorf("%s: %v", w.path, err) // Check decoded it already
				}
				pending = append(pending, store.Pending{Path: w.path, Raw: raw, File: &f, Workload: w.series})
				names = append(names, f.Target.Name)
			}
			lab, err := perTarget("--label", labels, names)
			if err != nil {
				return err
			}
			com, err := perTarget("--commit", commits, names)
			if err != nil {
				return err
			}
			st, err := open(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			added, err := st.AddFiles(cmd.Context(), pending, store.AddOptions{Labels: lab, Commits: com})
			for _, a := range added {
				fmt.Fprintln(stdout, storedLine(st.Location(), a))
			}
			return err
		},
	}
	cmd.Flags().StringArrayVar(&labels, "label", nil, "label [NAME=]LABEL of the files of target NAME, or of every file without one (repeatable)")
	cmd.Flags().StringArrayVar(&commits, "commit", nil, "commit [NAME=]SHA the files of target NAME measured, or every file without one (default: the CI environment's; repeatable)")
	return cmd
}

func newHistoryExportCmd(stdout io.Writer, open opener) *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "export [FILTER]",
		Short: "Write the stored result files in Go's benchmark format or Bencher's BMF",
		Long: `Write the stored result files with a point in a matching series, oldest
first, through the report formats: benchfmt (Go's benchmark format, each
file's target named LABEL@COMMIT: benchstat -col target FILE compares the
commits) or bmf (Bencher Metric Format, one benchmark per file and client
count, named LABEL@COMMIT/WORKLOAD/clients=N, a second run of one commit
with #2 after it). Whole files are written, every measure of them.

` + filterHelp(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "benchfmt" && format != "bmf" {
				return usage.Errorf("--format %q: want benchfmt or bmf", format)
			}
			rf, err := report.Lookup(format)
			if err != nil {
				return usage.Wrap(err)
			}
			st, f, err := open.filtered(cmd, args)
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := st.Runs(cmd.Context(), f)
			if err != nil {
				return err
			}
			if len(runs) == 0 {
				return noSeries(st, args)
			}
			d := &report.Doc{}
			used := map[string]int{}
			for _, r := range runs {
				file, err := st.File(cmd.Context(), r.ResultID)
				if err != nil {
					return err
				}
				name := runName(r.Label, r.Commit)
				if used[name]++; used[name] > 1 && format == "bmf" {
					name += "#" + strconv.Itoa(used[name])
				}
				d.Files = append(d.Files, compare.Input{Name: name, File: file})
			}
			var buf bytes.Buffer
			if err := rf.Write(&buf, d); err != nil {
				return err
			}
			return writeOutput(stdout, output, buf.Bytes())
		},
	}
	cmd.Flags().StringVar(&format, "format", "benchfmt", "benchfmt or bmf")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to FILE instead of stdout")
	return cmd
}

func newHistoryAckCmd(stdout io.Writer, open opener) *cobra.Command {
	var all bool
	var resultID int64
	var note string
	cmd := &cobra.Command{
		Use:   "ack FILTER|--all [--result N] [--note TEXT]",
		Short: "Mark a change point as known, so check reports only later ones",
		Long: `Acknowledge a change point in each matching series: the newest one check
reports, or, with --result N, the change at result N (the first point
after it; check prints it). From then on check reports only change points
after it. A commit that moved every series is acknowledged everywhere with
--all --result N.

` + filterHelp(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !all {
				return usage.Errorf("history ack needs a FILTER naming the series (or --all)")
			}
			st, f, err := open.filtered(cmd, args)
			if err != nil {
				return err
			}
			defer st.Close()
			ctx := cmd.Context()
			hs, err := st.Export(ctx, f)
			if err != nil {
				return err
			}
			if len(hs) == 0 {
				return noSeries(st, args)
			}
			acked := 0
			for _, h := range hs {
				at, what := ackPoint(h, resultID)
				if at == 0 {
					continue
				}
				if err := st.Ack(ctx, h.ID, at, note); err != nil {
					return err
				}
				acked++
				fmt.Fprintf(stdout, "acknowledged: series %d (%s) at result %d%s\n", h.ID, h.Key, at, what)
			}
			switch {
			case acked == 0 && resultID != 0:
				return usage.Errorf("no matching series has a point from result %d", resultID)
			case acked == 0:
				fmt.Fprintf(stdout, "nothing to acknowledge: no change point since the acknowledged ones in %d series\n", len(hs))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "every series of the store")
	cmd.Flags().Int64Var(&resultID, "result", 0, "the change at this result (the first point after it), as check prints it")
	cmd.Flags().StringVar(&note, "note", "", "why the change is known (kept with the acknowledgement)")
	return cmd
}

// ackPoint returns the result to acknowledge in h and what the change
// there is: the one given, when h has a point from it, else the newest
// change point after the acknowledged one; 0 when there is none.
func ackPoint(h trend.History, resultID int64) (int64, string) {
	cs, _ := h.ChangePoints(stats.ChangePointOptions{})
	if resultID != 0 {
		for _, p := range h.Points {
			if p.ResultID == resultID {
				for _, c := range cs {
					if c.After.ResultID == resultID {
						return resultID, ": " + stats.FormatChange(c.Change, c.Lo, c.Hi)
					}
				}
				return resultID, " (no change point found there)"
			}
		}
		return 0, ""
	}
	for i := len(cs) - 1; i >= 0; i-- {
		if !cs[i].Acked {
			return cs[i].After.ResultID, ": " + stats.FormatChange(cs[i].Change, cs[i].Lo, cs[i].Hi)
		}
	}
	return 0, ""
}

// parseFilter reads FILTER terms (filterHelp).
func parseFilter(args []string) (store.Filter, error) {
	var f store.Filter
	for _, a := range args {
		key, value, ok := strings.Cut(a, "=")
		if !ok {
			id, err := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
			if err != nil || id < 1 {
				return f, usage.Errorf("filter term %q: want N (a series number from pgscale history list) or KEY=VALUE; %s", a, filterKeys)
			}
			f.ID = id
			continue
		}
		value = strings.TrimSpace(value)
		if value == "" {
			return f, usage.Errorf("filter term %q: empty value", a)
		}
		switch strings.TrimSpace(key) {
		case "workload":
			if strings.Contains(value, " ") {
				f.Workload = value
			} else {
				f.Name = value
			}
		case "label":
			f.Label = value
		case "c", "clients":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				return f, usage.Errorf("filter term %q: %s is not a client count", a, value)
			}
			f.Clients = n
		case "measure":
			f.Measure = value
		case "machine":
			f.Machine = value
		default:
			return f, usage.Errorf("filter term %q: unknown key %q; %s", a, key, filterKeys)
		}
	}
	return f, nil
}

const filterKeys = "keys: workload, label, c, measure, machine"

// noSeries is the error of a filter that matches nothing.
func noSeries(st *store.Store, args []string) error {
	if len(args) == 0 {
		return usage.Errorf("no series in %s; record runs with --store or pgscale history add", st.Location())
	}
	return usage.Errorf("no series in %s matches %s; see pgscale history list", st.Location(), strings.Join(args, " "))
}

// seriesClients returns the client counts of the series, once each.
func seriesClients(series []trend.Series) []int {
	var out []int
	seen := map[int]bool{}
	for _, s := range series {
		if !seen[s.Clients] {
			seen[s.Clients] = true
			out = append(out, s.Clients)
		}
	}
	return out
}

// runName names a stored run in exports and comparisons: LABEL@COMMIT
// (the commit shortened), or LABEL when it recorded none.
func runName(label, commit string) string {
	if commit == "" {
		return label
	}
	return label + "@" + report.ShortCommit(commit)
}
