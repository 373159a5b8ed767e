package agent

import (
	"fmt"
	"time"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/script"
)

// interval rebuilds a metrics interval from its counts and histogram.
func interval(c metrics.Counts, hist string) (*metrics.Interval, error) {
	iv := metrics.NewInterval(0, 0)
	iv.Counts = c
	if hist != "" {
		h, err := metrics.DecodeHistogram(hist)
		if err != nil {
			return nil, err
		}
		iv.Latency.Merge(h)
	}
	return iv, nil
}

// agentResult is what one agent measured in a step, as the engine's result
// of a process running its share: from its final report, or, when it sent
// none (it died), from the intervals it did send.
func agentResult(prog *script.Program, share Share, final *FinalReport, ivs []IntervalReport) (*engine.Result, error) {
	io := engine.IORaw
	if final != nil {
		if m, err := engine.ParseIOMode(final.IO); err == nil {
			io = m
		}
	}
	r := engine.NewResult(share.Clients, prog, io)
	for _, ir := range ivs {
		if ir.Warmup {
			continue
		}
		iv, err := interval(ir.Counts, ir.Histogram)
		if err != nil {
			return nil, fmt.Errorf("interval %d: %w", ir.Seq, err)
		}
		r.Series = append(r.Series, engine.Point{Start: ir.Start, Length: ir.Length, Counts: ir.Counts, Latency: iv.Summarize(),
			Histogram: ir.Histogram})
		if final == nil {
			r.Total.Merge(iv)
			r.Elapsed = ir.Start + ir.Length
		}
	}
	if final == nil {
		return r, nil
	}
	iv, err := interval(final.Counts, final.Histogram)
	if err != nil {
		return nil, fmt.Errorf("final report: %w", err)
	}
	r.Total.Merge(iv)
	copy(r.Total.Scripts, final.Scripts)
	copy(r.Total.Commands, final.Commands)
	r.Colocated, r.Began, r.Elapsed = final.Colocated, final.Began, final.Elapsed
	r.ClientUser, r.ClientSys = final.ClientUser, final.ClientSys
	r.ConnectMean, r.ConnectElapsed = final.ConnectMean, final.ConnectElapsed
	r.Aborted, r.Incomplete = final.Aborted, final.Incomplete
	for _, e := range final.Errors {
		r.Errors = append(r.Errors, engine.ErrorCount{Kind: e.Kind, Msg: e.Msg, Count: e.Count})
	}
	return r, nil
}

// merge adds the agents' results of a step into one, as if one process
// had run every client: counts, histograms, per-script and per-command
// figures and errors add; the CPU of every agent adds; the series adds
// interval by interval (the agents' intervals share one grid, from the
// start they agreed on), each interval as long as the agents' mean.
// The window is the agents' mean, from the earliest start.
func merge(clients int, prog *script.Program, rs []*engine.Result) *engine.Result {
	io := engine.IORaw
	for _, r := range rs {
		if r.Clients > 0 {
			io = r.IO
			break
		}
	}
	m := engine.NewResult(clients, prog, io)
	errs := map[[2]string]int{}
	var connSum, elapsedSum time.Duration
	active := 0
	for _, r := range rs {
		if r.Clients == 0 {
			continue
		}
		active++
		m.Total.Merge(r.Total)
		m.ClientUser += r.ClientUser
		m.ClientSys += r.ClientSys
		m.Colocated += r.Colocated
		m.Aborted += r.Aborted
		m.ConnectElapsed = max(m.ConnectElapsed, r.ConnectElapsed)
		connSum += r.ConnectMean * time.Duration(r.Clients)
		elapsedSum += r.Elapsed
		if !r.Began.IsZero() && (m.Began.IsZero() || r.Began.Before(m.Began)) {
			m.Began = r.Began
		}
		for _, e := range r.Errors {
			k := [2]string{e.Kind.String(), e.Msg}
			if i, ok := errs[k]; ok {
				m.Errors[i].Count += e.Count
				continue
			}
			errs[k] = len(m.Errors)
			m.Errors = append(m.Errors, e)
		}
	}
	if active == 0 {
		return m
	}
	m.ConnectMean = connSum / time.Duration(clients)
	m.Elapsed = elapsedSum / time.Duration(active)
	for k := 0; ; k++ {
		var sum *metrics.Interval
		var start, length time.Duration
		n := 0
		for _, r := range rs {
			if k >= len(r.Series) {
				continue
			}
			p := r.Series[k]
			iv, err := interval(p.Counts, p.Histogram)
			if err != nil {
				continue // the agent's result was built from these: cannot happen
			}
			if sum == nil {
				sum, start = iv, p.Start
			} else {
				sum.Merge(iv)
			}
			length += p.Length
			n++
		}
		if n == 0 {
			break
		}
		p := engine.Point{Start: start, Length: length / time.Duration(n), Counts: sum.Counts, Latency: sum.Summarize()}
		p.Histogram, _ = metrics.EncodeHistogram(sum.Latency)
		m.Series = append(m.Series, p)
	}
	return m
}
