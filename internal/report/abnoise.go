package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pgscale/pgscale/internal/stats"
)

// NoiseReport is what an A/A run of the baseline against itself says about
// the noise of each measure, and the rounds an A/B run needs to see a 2 %
// and a 5 % change.
type NoiseReport struct {
	// Target names the baseline that ran against itself.
	Target string
	// Workload names what ran.
	Workload string
	// Rounds is the number of complete rounds used.
	Rounds int
	// Power is the power the round counts are sized for.
	Power float64
	// Rows hold one entry per step and measure.
	Rows []stats.Noise
}

// Noise measures the paired noise of every measure from the rounds of an
// A/A run: a and b are the two sides, which ran the same thing.
func Noise(a, b Input, opt stats.NoiseOptions) (*NoiseReport, error) {
	inputs := []Input{a, b}
	if sameRun(inputs) == nil {
		return nil, fmt.Errorf("%s and %s are not from one A/B run: noise needs paired rounds", a.Name, b.Name)
	}
	clients := stepClients(a.File)
	rounds := completeRounds(inputs, clients)
	rep := &NoiseReport{Target: a.Name, Workload: a.File.Workload.Name, Rounds: len(rounds), Power: opt.Power}
	if rep.Power == 0 {
		rep.Power = stats.DefaultPower
	}
	for _, c := range clients {
		for _, md := range Measures() {
			m := stats.Measure{Name: md.Name, Step: StepLabel(c), Unit: md.Unit, Direction: md.Direction}
			va := values(a.File, c, md, rounds, stats.Paired)
			if allNaN(va) {
				continue
			}
			rep.Rows = append(rep.Rows, stats.NoiseAA(m, va, values(b.File, c, md, rounds, stats.Paired), opt))
		}
	}
	return rep, nil
}

// WriteNoiseText writes the noise table: per step and measure the A/A
// change, the paired standard deviation of the per-round log ratio, and the
// rounds needed to detect a 2 % and a 5 % change.
func WriteNoiseText(w io.Writer, r *NoiseReport) error {
	var b strings.Builder
	conf := stats.DefaultConfidence
	if len(r.Rows) > 0 {
		conf = r.Rows[0].Confidence
	}
	fmt.Fprintf(&b, "A/A noise of %s (%s) over %d rounds: rounds an A/B run needs to detect a change at %g%% confidence with %g%% power\n\n",
		r.Target, r.Workload, r.Rounds, 100*conf, 100*r.Power)
	t := table{header: []string{"step", "measure", "A/A change", "paired sd", "rounds for 2%", "rounds for 5%"},
		right: map[int]bool{2: true, 3: true, 4: true, 5: true}}
	var warns []error
	for _, n := range r.Rows {
		sd := "-"
		if !math.IsNaN(n.SDLog) {
			sd = fmt.Sprintf("%.1f%%", 100*n.SDLog)
		}
		t.rows = append(t.rows, []cell{{text: n.Measure.Step}, {text: measureLabel(n.Measure)},
			{text: stats.FormatChange(n.Change, n.Lo, n.Hi)}, {text: sd}, {text: rounds(n.Rounds2)}, {text: rounds(n.Rounds5)}})
		warns = append(warns, n.Warnings...)
	}
	notes := mergeWarnings(warns)
	t.write(&b)
	b.WriteString("\npaired sd is the standard deviation of ln(b/a) over the rounds; the rounds needed grow with its square.\n")
	if len(notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range notes {
			b.WriteString("  " + n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func rounds(n int) string {
	if n <= 0 {
		return "-"
	}
	return fmt.Sprint(n)
}
