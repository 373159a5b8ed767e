package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/disturb"
	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/observe"
)

// disturbFlags schedule disturbances (DDL churn, checkpoints...) in timed
// windows of each step.
type disturbFlags struct {
	req  disturb.Request
	list []disturb.Disturbance // set by validate

	// Set by the run before observers: the scripts' :scale, seed and -D
	// variables, and where notices go.
	scale   int
	seed    uint64
	defines map[string]string
	log     io.Writer

	disturber *disturb.Disturber
}

func (d *disturbFlags) register(fs *pflag.FlagSet) {
	var names []string
	for _, b := range disturb.Builtins() {
		names = append(names, b.Name)
	}
	fs.StringArrayVar(&d.req.Builtins, "disturb", nil, "in every step, run built-in disturbance NAME[=ARG]@START[-END][:SESSIONS] ("+
		strings.Join(names, ", ")+"); times count from the start of measuring (repeatable)")
	fs.StringArrayVar(&d.req.Files, "disturb-file", nil, "in every step, run script FILE@START[-END][:SESSIONS] in a loop on sessions of its own (repeatable)")
}

// validate parses every disturbance and checks its window against the
// run's measured duration.
func (d *disturbFlags) validate(duration time.Duration, transactions int) error {
	list, err := disturb.Parse(d.req, duration, transactions)
	d.list = list
	return err
}

// sessions is the number of connections the disturbances open at once.
func (d *disturbFlags) sessions() int { return disturb.Sessions(d.list) }

// observers returns the disturbances to run beside each step on tgt.
func (d *disturbFlags) observers(tgt *openTarget) ([]observe.Watcher, error) {
	if len(d.list) == 0 {
		return nil, nil
	}
	log := d.log
	if log == nil {
		log = io.Discard
	}
	dt, err := disturb.New(context.Background(), d.list, disturb.Config{Conn: tgt.Config, Scale: d.scale, Seed: d.seed,
		Defines: d.defines, Events: func(s string) { fmt.Fprintln(log, s) }}, tgt.Connect)
	if err != nil {
		return nil, err
	}
	d.disturber = dt
	return []observe.Watcher{dt}, nil
}

// markers are the window edges to append to a progress line.
func (d *disturbFlags) markers(p engine.Progress) string {
	if d.disturber == nil {
		return ""
	}
	var m []string
	for _, e := range d.disturber.Edges(p.Start, p.Start+p.Length, p.Elapsed-(p.Start+p.Length)) {
		if e.Start {
			m = append(m, "["+e.Name+" started]")
		} else {
			m = append(m, "["+e.Name+" stopped]")
		}
	}
	if len(m) == 0 {
		return ""
	}
	return " " + strings.Join(m, " ")
}
