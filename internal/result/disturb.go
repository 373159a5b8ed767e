package result

import (
	"fmt"
	"math"
)

// Disturbance is one disturbance window run during a step and what it did:
// a script run in a loop by sessions of its own (never counted as workload
// transactions), and the workload's throughput and latency before, during
// and after it.
type Disturbance struct {
	Name    string `json:"name"`    // built-in name, or the script file as given
	Builtin bool   `json:"builtin"` // a built-in (workload.Disturbances), not a file
	Spec    string `json:"spec"`    // as written: "ddl-churn@15s-30s:2"
	// Stresses says what a built-in stresses in the server.
	Stresses string            `json:"stresses,omitempty"`
	Script   string            `json:"script"`            // the script each session ran
	Defines  map[string]string `json:"defines,omitempty"` // its variables (built-in arguments)
	// Hold: each session ran the script once and held its session and
	// open transaction until the window ended.
	Hold bool `json:"hold,omitempty"`
	// StartS and EndS are the planned window, in seconds since the
	// measured window began (the clock of Interval.StartS). OpenEnd marks a
	// window given without an end, which lasts until the step ends; EndS
	// is then the step's end.
	StartS   float64 `json:"start_s"`
	EndS     float64 `json:"end_s"`
	OpenEnd  bool    `json:"open_end,omitempty"`
	Sessions int     `json:"sessions"`
	// RanS is how long the sessions actually ran (zero if the step ended
	// before the window opened).
	RanS float64 `json:"ran_s"`
	// Iterations counts complete runs of the script over all sessions
	// (a run cut short in its final \sleep counts); Errors counts runs that
	// failed; CutOff counts runs stopped unfinished by the window's end.
	Iterations int64 `json:"iterations"`
	Errors     int64 `json:"errors"`
	CutOff     int64 `json:"cut_off,omitempty"`
	// Rate is Iterations per second of RanS, over all sessions.
	Rate float64 `json:"rate"`
	// ErrorMessages are the distinct errors seen, most frequent first.
	ErrorMessages []Error `json:"error_messages,omitempty"`
	// Effect is the workload before, during and after the window; absent
	// when the window did not run.
	Effect *Effect `json:"effect,omitempty"`
}

// Effect is the workload's throughput and latency before, during and after
// a disturbance window, and the change during vs before.
type Effect struct {
	// Method says how the phases and the change were computed.
	Method string `json:"method"`
	// Before is the quiet stretch just before the window (no other window
	// active), its first seconds left out (warm-up or recovery); During is
	// the window; After is the quiet stretch after it. A phase with no
	// whole interval in it is absent.
	Before *Phase `json:"before,omitempty"`
	During *Phase `json:"during,omitempty"`
	After  *Phase `json:"after,omitempty"`
	// TPS and Latency are the changes during vs before of the
	// per-interval throughput and mean latency; absent without both a
	// before and a during phase.
	TPS     *WindowChange `json:"tps_change,omitempty"`
	Latency *WindowChange `json:"latency_change,omitempty"`
	// AfterTPS is the change after vs before of the per-interval
	// throughput, whether the workload recovered once the window ended
	// (its "during" holds the mean after); absent without both a before
	// and an after phase.
	AfterTPS *WindowChange `json:"after_tps_change,omitempty"`
	// Warnings are caveats about these numbers (too few seconds for an
	// interval, overlapping windows, autocorrelation left).
	Warnings []string `json:"warnings,omitempty"`
}

// Phase is the workload's figures over whole intervals of one stretch of
// a step.
type Phase struct {
	FromS        float64 `json:"from_s"` // since the measured window began
	ToS          float64 `json:"to_s"`
	Intervals    int     `json:"intervals"`
	Transactions int64   `json:"transactions"`
	TPS          float64 `json:"tps"`         // transactions / seconds
	LatMeanMs    float64 `json:"lat_mean_ms"` // exact mean over the transactions
	LatP99Ms     float64 `json:"lat_p99_ms"`  // from the merged interval histograms
	Failed       int64   `json:"failed"`
}

// WindowChange is a relative change during vs before, during/before − 1,
// with its confidence interval from batch means of the per-interval
// values (stats.CompareWindows).
type WindowChange struct {
	Base   float64 `json:"before"` // mean of the per-interval values used before
	Cand   float64 `json:"during"` // and during
	Change float64 `json:"change"` // -0.25: 25 % lower during
	// Lo and Hi bound the interval at Confidence; absent when no interval
	// could be formed (too few batches, a zero mean).
	Lo         *float64 `json:"lo,omitempty"`
	Hi         *float64 `json:"hi,omitempty"`
	P          *float64 `json:"p,omitempty"` // two-sided p of the Welch test on the log ratio
	Confidence float64  `json:"confidence"`
	// BatchS is the batch length in seconds; BatchesBefore and
	// BatchesDuring count the batches each side.
	BatchS        float64 `json:"batch_s"`
	BatchesBefore int     `json:"batches_before"`
	BatchesDuring int     `json:"batches_during"`
}

// validate checks what readers of a disturbance rely on.
func (d *Disturbance) validate() error {
	switch {
	case d.Spec == "" || d.Name == "":
		return fmt.Errorf("disturbance without a name or spec")
	case d.Sessions < 1:
		return fmt.Errorf("disturbance %s: %d sessions", d.Spec, d.Sessions)
	case d.StartS < 0 || d.EndS < d.StartS:
		return fmt.Errorf("disturbance %s: window %v-%v s", d.Spec, d.StartS, d.EndS)
	case d.Iterations < 0 || d.Errors < 0 || d.CutOff < 0 || d.RanS < 0 || d.Rate < 0:
		return fmt.Errorf("disturbance %s: negative counts", d.Spec)
	}
	if e := d.Effect; e != nil {
		for _, c := range []*WindowChange{e.TPS, e.Latency, e.AfterTPS} {
			if c != nil && (math.IsNaN(c.Change) || c.Lo != nil && c.Hi != nil && !(*c.Lo <= c.Change && c.Change <= *c.Hi)) {
				return fmt.Errorf("disturbance %s: change %v outside its interval", d.Spec, c.Change)
			}
		}
	}
	return nil
}
