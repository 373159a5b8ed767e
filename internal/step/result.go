package step

import (
	"math"
	"runtime"

	"github.com/pgscale/pgscale/internal/engine"
	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/script"
)

func ms(us float64) float64 { return us / 1000 }

func failedByKind(c *metrics.Counts) map[string]int64 { return byKind(&c.Failed) }

// byKind names the failure counts that are not zero; nil when none is.
func byKind(failed *[metrics.NumFailKinds]int64) map[string]int64 {
	var m map[string]int64
	for k, n := range failed {
		if n > 0 {
			if m == nil {
				m = map[string]int64{}
			}
			m[metrics.FailKind(k).String()] = n
		}
	}
	return m
}

// Result turns what the engine measured into the result file's step.
func Result(r *engine.Result, scripts []*script.Script) result.Step {
	t := r.Total
	el := r.Elapsed.Seconds()
	s := result.Step{
		Clients:   r.Clients,
		IO:        r.IO.String(),
		Colocated: r.Colocated,
		Complete:  r.Incomplete == "",
		Reason:    r.Incomplete,
		Started:   r.Began.UTC(),
		ElapsedS:  el,
	}
	sum := &s.Summary
	sum.Transactions = t.Transactions
	if el > 0 {
		sum.TPS = float64(t.Transactions) / el
	}
	sum.Latency = result.Latency(t.Summarize())
	sum.Failed = t.FailedTotal()
	sum.FailedByKind = failedByKind(&t.Counts)
	sum.Retried, sum.Retries, sum.Skipped, sum.Late = t.Retried, t.Retries, t.Skipped, t.Late
	if t.Transactions > 0 {
		sum.LagMeanMs = ms(t.LagSumUS / float64(t.Transactions))
	}
	sum.LagMaxMs = ms(float64(t.LagMaxUS))
	sum.ConnectMs = float64(r.ConnectMean.Microseconds()) / 1000
	sum.InitialConnectMs = float64(r.ConnectElapsed.Microseconds()) / 1000
	sum.Connections = t.Conns
	if t.Conns > 0 {
		sum.ConnMeanMs = ms(t.ConnSumUS / float64(t.Conns))
	}
	cpu := r.ClientUser + r.ClientSys
	sum.ClientCPU = result.CPU{UserS: r.ClientUser.Seconds(), SysS: r.ClientSys.Seconds()}
	if t.Transactions > 0 {
		sum.ClientCPU.PerTxnUS = float64(cpu.Microseconds()) / float64(t.Transactions)
	}
	if el > 0 {
		sum.ClientCPU.Share = cpu.Seconds() / (el * float64(runtime.NumCPU()))
	}
	sum.Aborted = r.Aborted
	for _, o := range r.Outages {
		s.Outages = append(s.Outages, result.Outage{AtS: o.Start.Seconds(), ServerS: (o.Server - o.Start).Seconds(),
			BackS: (o.Back - o.Start).Seconds(), AllBack: o.AllBack, Clients: o.Clients, Failed: int64(o.Clients)})
	}
	s.Histogram, _ = metrics.EncodeHistogram(t.Latency)
	for _, p := range r.Series {
		iv := result.Interval{
			StartS: p.Start.Seconds(), LengthS: p.Length.Seconds(),
			Transactions: p.Counts.Transactions, Latency: result.Latency(p.Latency),
			Failed: p.Counts.FailedTotal(), FailedByKind: failedByKind(&p.Counts),
			Retries: p.Counts.Retries, Skipped: p.Counts.Skipped, Late: p.Counts.Late,
			Histogram: p.Histogram,
		}
		if p.Length > 0 {
			iv.TPS = float64(p.Counts.Transactions) / p.Length.Seconds()
		}
		if p.Counts.Transactions > 0 {
			iv.LagMeanMs = ms(p.Counts.LagSumUS / float64(p.Counts.Transactions))
		}
		s.Intervals = append(s.Intervals, iv)
	}
	if len(scripts) > 1 {
		for si, sc := range scripts {
			st := t.Scripts[si]
			ss := result.ScriptStat{Name: sc.Name, Weight: sc.Weight, Transactions: st.Transactions, Failed: st.Failed,
				FailedByKind: byKind(&st.ByKind), Retried: st.Retried, Retries: st.Retries, Skipped: st.Skipped}
			if el > 0 {
				ss.TPS = float64(st.Transactions) / el
			}
			if st.Transactions > 0 {
				n := float64(st.Transactions)
				mean := st.LatSumUS / n
				ss.LatMeanMs = mean / 1000
				ss.LatStddevMs = math.Sqrt(max(st.LatSumSqUS/n-mean*mean, 0)) / 1000
			}
			s.Scripts = append(s.Scripts, ss)
		}
	}
	if len(t.Commands) > 0 && anyCommand(t.Commands) {
		for si, sc := range scripts {
			for pc, cmd := range sc.Commands {
				st := t.Commands[r.CommandOffset(si)+pc]
				c := result.Command{Script: sc.Name, ScriptIndex: si, Line: cmd.Line, Text: cmd.Text, FirstLine: cmd.FirstLine(),
					Count: st.Count, Failed: st.Failed, Retries: st.Retries}
				if st.Count > 0 {
					c.MeanMs = ms(st.SumUS / float64(st.Count))
				}
				s.Commands = append(s.Commands, c)
			}
		}
	}
	for _, e := range r.Errors {
		s.Errors = append(s.Errors, result.Error{Kind: e.Kind.String(), Message: e.Msg, Count: e.Count})
	}
	result.SortErrors(s.Errors)
	return s
}

func anyCommand(cs []metrics.CommandStat) bool {
	for _, c := range cs {
		if c.Count > 0 || c.Failed > 0 {
			return true
		}
	}
	return false
}
