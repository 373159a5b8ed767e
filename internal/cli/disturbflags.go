package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/plan"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/workload"
)

// disturbFlags schedule disturbances (DDL churn, checkpoints...) in timed
// windows of each step.
type disturbFlags struct {
	builtins []string // --disturb NAME[=ARG]@START[-END][:SESSIONS]
	files    []string // --disturb-file FILE@START[-END][:SESSIONS]

	// Set by validate: the disturbances, and for each the flag it came
	// from and a built-in's definition and argument.
	list  []plan.Disturbance
	flags []string
	defs  []*workload.Disturbance
	args  []string

	// Set by the run before observers: the scripts' :scale, seed and -D
	// variables, and where notices go.
	scale   int
	seed    uint64
	defines map[string]string
	log     io.Writer

	disturber *plan.Disturber
}

func (d *disturbFlags) register(fs *pflag.FlagSet) {
	var names []string
	for _, b := range workload.Disturbances() {
		names = append(names, b.Name)
	}
	fs.StringArrayVar(&d.builtins, "disturb", nil, "in every step, run built-in disturbance NAME[=ARG]@START[-END][:SESSIONS] ("+
		strings.Join(names, ", ")+"); times count from the start of measuring (repeatable)")
	fs.StringArrayVar(&d.files, "disturb-file", nil, "in every step, run script FILE@START[-END][:SESSIONS] in a loop on sessions of its own (repeatable)")
}

// validate parses every disturbance and checks its window against the
// run's measured duration.
func (d *disturbFlags) validate(duration time.Duration, transactions int) error {
	if len(d.builtins)+len(d.files) == 0 {
		return nil
	}
	d.list, d.flags, d.defs, d.args = nil, nil, nil, nil
	first := "--disturb"
	if len(d.builtins) == 0 {
		first = "--disturb-file"
	}
	if transactions > 0 && duration <= 0 {
		return Usagef("%s needs -T: windows are placed in time, and -t runs for an unknown time", first)
	}
	for _, s := range d.builtins {
		if err := d.addBuiltin(s); err != nil {
			return Usagef("--disturb %q: %v", s, err)
		}
	}
	for _, s := range d.files {
		if err := d.addFile(s); err != nil {
			return Usagef("--disturb-file %q: %v", s, err)
		}
	}
	if err := plan.CheckSchedule(d.list, duration); err != nil {
		var se *plan.ScheduleError
		if errors.As(err, &se) {
			return Usagef("%s %q: %v", d.flags[se.Index], d.list[se.Index].Spec, se.Msg)
		}
		return &UsageError{Err: err}
	}
	return nil
}

func (d *disturbFlags) addBuiltin(s string) error {
	spec, err := plan.ParseDisturbSpec(s)
	if err != nil {
		return err
	}
	name, arg, _ := strings.Cut(spec.Head, "=")
	def, err := workload.FindDisturbance(name)
	if err != nil {
		return err
	}
	if err := def.CheckArg(arg); err != nil {
		return err
	}
	sc, err := script.Parse("disturbance:"+def.Name, def.Script)
	if err != nil {
		return fmt.Errorf("built-in %s: %w", def.Name, err) // a bug, not the user's
	}
	d.add("--disturb", plan.Disturbance{
		Name: def.Name, Builtin: true, Spec: s, Stresses: def.Stresses, Script: sc, Hold: def.Hold,
		Window: spec.Window, Sessions: spec.Sessions,
	}, &def, arg)
	return nil
}

func (d *disturbFlags) addFile(s string) error {
	spec, err := plan.ParseDisturbSpec(s)
	if err != nil {
		return err
	}
	src, err := os.ReadFile(spec.Head)
	if err != nil {
		return fmt.Errorf("cannot read script: %v", err)
	}
	sc, err := script.Parse(spec.Head, string(src))
	if err != nil {
		return err
	}
	if err := plan.CheckDisturbScript(sc); err != nil {
		return err
	}
	d.add("--disturb-file", plan.Disturbance{
		Name: spec.Head, Spec: s, Script: sc, Window: spec.Window, Sessions: spec.Sessions,
	}, nil, "")
	return nil
}

func (d *disturbFlags) add(flag string, pd plan.Disturbance, def *workload.Disturbance, arg string) {
	d.list = append(d.list, pd)
	d.flags = append(d.flags, flag)
	d.defs = append(d.defs, def)
	d.args = append(d.args, arg)
}

// sessions is the number of connections the disturbances open at once.
func (d *disturbFlags) sessions() int {
	n := 0
	for _, x := range d.list {
		n += x.Sessions
	}
	return n
}

// observers returns the disturbances to run beside each step on tgt.
func (d *disturbFlags) observers(tgt *openTarget) ([]plan.Observer, error) {
	if len(d.list) == 0 {
		return nil, nil
	}
	ctx := context.Background()
	for i, def := range d.defs {
		if def == nil {
			continue
		}
		var (
			vars map[string]string
			err  error
		)
		if def.Arg == workload.TableArg && d.args[i] == "" {
			// The default table is found in the database.
			c, cerr := tgt.Connect(ctx)
			if cerr != nil {
				return nil, cerr
			}
			vars, err = def.Vars(ctx, c, d.args[i])
			c.Close(ctx)
		} else {
			vars, err = def.Vars(ctx, nil, d.args[i])
		}
		if err != nil {
			return nil, Usagef("%s %q: %v", d.flags[i], d.list[i].Spec, err)
		}
		d.list[i].Defines = vars
	}
	for i := range d.list {
		d.list[i].Defines = mergeDefines(d.defines, d.list[i].Defines)
	}
	log := d.log
	if log == nil {
		log = io.Discard
	}
	d.disturber = &plan.Disturber{
		Conn: tgt.Config, Disturbances: d.list, Scale: d.scale, Seed: d.seed,
		Events: func(s string) { fmt.Fprintln(log, s) },
	}
	return []plan.Observer{d.disturber}, nil
}

// markers are the window edges to append to a progress line.
func (d *disturbFlags) markers(p engine.Progress) string {
	if d.disturber == nil {
		return ""
	}
	m := d.disturber.Markers(p)
	if len(m) == 0 {
		return ""
	}
	return " " + strings.Join(m, " ")
}

// mergeDefines returns -D's variables with a built-in's own on top; nil
// when there are none.
func mergeDefines(run, own map[string]string) map[string]string {
	if len(run)+len(own) == 0 {
		return nil
	}
	m := make(map[string]string, len(run)+len(own))
	for k, v := range run {
		m[k] = v
	}
	for k, v := range own {
		m[k] = v
	}
	return m
}
