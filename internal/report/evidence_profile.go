package report

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/report/remedy"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerWriter(probeid.Profile, writeProfile) }

// writeProfile writes the profile's file and the functions with the
// most samples of their own (the flame graph is the HTML format's), then
// the server's cost per transaction split by who did the work
// (diagnose.CPUSplit) and what could not be named, and why.
func writeProfile(pg page, s result.Step, f diagnose.Figures) {
	pr := s.Probes.Profile()
	if pr == nil {
		return
	}
	var top []string
	for i, fn := range pr.Top {
		if i == 5 {
			break
		}
		top = append(top, fmt.Sprintf("%s %s", fn.Function, prose.Share(float64(fn.Self)/float64(max(pr.Samples, 1)))))
	}
	unit := "samples"
	if pr.Unit != "" {
		unit = pr.Unit
	}
	line := fmt.Sprintf("%s, %d %s", pr.File, pr.Samples, unit)
	if pr.Hz > 0 {
		line += fmt.Sprintf(" at %d Hz", pr.Hz)
	}
	if el := s.Probes.ElapsedS; pr.RecordedS > 0 && el > 0 && pr.RecordedS < 0.9*el {
		line += fmt.Sprintf(" in %.1f s of the step's %.1f s (perf was slow to start)", pr.RecordedS, el)
	}
	if len(top) > 0 {
		line += "; self: " + strings.Join(top, ", ")
	}
	pg.item("profile", line)
	if sp := f.Split; sp != nil {
		writeSplit(pg, sp)
	}
}

// writeSplit lays out a step's CPUSplit.
func writeSplit(pg page, sp *diagnose.CPUSplit) {
	what := fmt.Sprintf("%s µs of server CPU per transaction, by who ran it (%d samples at %d Hz; ± a 95%% interval)",
		splitNum(sp.PerTxn, false), sp.Samples, sp.Hz)
	if sp.Counted {
		what = fmt.Sprintf("%s instructions per transaction in the client backends, by who ran them (counted, exact)", splitNum(sp.PerTxn, true))
	}
	if len(sp.Groups) == 0 {
		// No sample: nothing to split, only why.
		if sp.Caution != "" {
			pg.item("split", sp.Caution)
		}
		return
	}
	var parts []string
	for _, g := range sp.Groups {
		var objs []string
		for _, o := range sp.Objects {
			if o.Kind == g.Kind {
				objs = append(objs, o.Name)
				if len(g.Objects) > 1 {
					objs[len(objs)-1] += " " + splitNum(o.PerTxn, sp.Counted)
				}
			}
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s: %s)", g.Name, splitValue(g, sp.Counted), prose.Share(g.Share), objectList(objs)))
	}
	pg.item("cpu split", what+": "+strings.Join(parts, ", "))
	if len(sp.Functions) > 0 {
		var t *table
		if sp.Counted {
			t = newTable("instr/txn", "share", "with callees", "function (own instructions)").alignRight(0, 1, 2)
		} else {
			t = newTable("µs/txn", "±", "share", "with callees", "function (own time)").alignRight(0, 1, 2, 3)
		}
		for _, fn := range sp.Functions {
			name := truncate(fn.Name, 60) + " (" + fn.Object + ")"
			if sp.Counted {
				t.row(splitNum(fn.PerTxn, true), prose.Share(fn.Share), splitNum(fn.TotalPerTxn, true), name)
			} else {
				t.row(splitNum(fn.PerTxn, false), splitNum(fn.Margin, false), prose.Share(fn.Share), splitNum(fn.TotalPerTxn, false), name)
			}
		}
		pg.subtable(t)
	}
	var un []string
	for _, u := range sp.Unnamed {
		un = append(un, fmt.Sprintf("%s in %s", prose.Share(u.Share), u.Object))
	}
	if len(un) > 0 {
		what := "samples"
		if sp.Counted {
			what = "instructions"
		}
		un[0] = strings.Replace(un[0], " in ", " of the "+what+" in ", 1)
		pg.item("not named", fmt.Sprintf("%s, in functions without a name (why, and what would name them: under %q below)",
			strings.Join(un, ", "), unnamedLabel))
	}
	if sp.Caution != "" {
		pg.item("split", sp.Caution)
	}
}

// splitValue is a part's cost per transaction, with its interval when
// sampled.
func splitValue(p diagnose.SplitPart, counted bool) string {
	if counted {
		return splitNum(p.PerTxn, true)
	}
	return fmt.Sprintf("%s ± %s µs", splitNum(p.PerTxn, false), splitNum(p.Margin, false))
}

// splitNum writes µs to a tenth below 10, whole above; instructions whole.
func splitNum(v float64, counted bool) string {
	if counted || v >= 10 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// objectList names a group's objects, at most three and how many more.
func objectList(objs []string) string {
	if len(objs) <= 3 {
		return strings.Join(objs, ", ")
	}
	return strings.Join(objs[:3], ", ") + fmt.Sprintf(" and %d more", len(objs)-3)
}

// unnamedLabel heads the lines of a file's report that say, once, why
// some functions of its profiles have no name.
const unnamedLabel = "functions without a name"

// writeUnnamed says, once per file, which objects' functions its profiles
// could not name, and what would name them.
func writeUnnamed(p page, us []diagnose.UnnamedCode) {
	if len(us) == 0 {
		return
	}
	p.section("Functions without a name", unnamedLabel+":")
	for _, u := range us {
		p.para(fmt.Sprintf("%s (up to %s of a step's profile): %s.", u.Object, prose.Share(u.Share), remedy.Unnamed(u)))
	}
}
