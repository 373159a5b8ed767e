package cli

import (
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/store"
	"github.com/pgscale/pgscale/internal/usage"
)

// filterHelp says how series are selected, for every history command.
func filterHelp() string {
	return `A FILTER is one or more terms, all of which a series must match: N (the
series numbered N in pgscale history list), workload=NAME (the workload's
name, or its whole key when quoted with its options: 'select-only -s 1 -M
prepared'; micro-benchmarks' micro:PROJECT), label=LABEL, c=N (clients),
measure=NAME (` + measureNames() + `; a micro-benchmark's
micro:BENCH or micro:BENCH@UNIT) and machine=FINGERPRINT.`
}

// newHistoryCmd is `pgscale history`: the store it opens, shared by the
// subcommands of its files history*.go, one each.
func newHistoryCmd(stdout io.Writer) *cobra.Command {
	var location string
	cmd := &cobra.Command{
		Use:   "history list|show|check|add|export|ack|bisect",
		Short: "The run history: series across commits, trend charts, change points",
		Long: `pgscale keeps a history of result files in a store (an SQLite file by default,
PostgreSQL for teams): run, ab, suite and micro record what they write with
--store (or $` + store.EnvLocation + `), history add records files written before.
Each file's figures become points of series: one measure at one client count
of one workload, on one label (a line of history: main, patched) and one
machine; a micro-benchmark's measure on one target of a micro run.
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
		newHistoryBisectCmd(stdout, open),
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

// runName names a stored run in exports and comparisons: LABEL@COMMIT
// (the commit shortened), or LABEL when it recorded none.
func runName(label, commit string) string {
	if commit == "" {
		return label
	}
	return label + "@" + report.ShortCommit(commit)
}
