package compare

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/stats"
)

// Noise is what an A/A run of the baseline against itself says about
// the noise of each measure, and the rounds an A/B run needs to see a 2 %
// and a 5 % change.
type Noise struct {
	// Target names the baseline that ran against itself.
	Target string
	// Workload names what ran.
	Workload string
	// Rounds is the number of complete rounds used.
	Rounds int
	// Power is the power the round counts are sized for.
	Power float64
	// Layouts, for a calibration whose clusters were re-created every
	// Reshuffle rounds, counts the layouts its rounds ran on; the rows
	// then hold the spread between layouts too. 0 otherwise.
	Layouts, Reshuffle int
	// Rows hold one entry per step and measure.
	Rows []stats.Noise
}

// NoiseOf measures the paired noise of every measure from the rounds of an
// A/A run: a and b are the two sides, which ran the same thing.
func NoiseOf(a, b Input, opt stats.NoiseOptions) (*Noise, error) {
	inputs := []Input{a, b}
	if sameRun(inputs) == nil {
		return nil, fmt.Errorf("%s and %s are not from one A/B run: noise needs paired rounds", a.Name, b.Name)
	}
	clients := stepClients(a.File)
	rounds := completeRounds(inputs, clients)
	rep := &Noise{Target: a.Name, Workload: a.File.Workload.Name, Rounds: len(rounds), Power: opt.Power}
	layouts := roundLayouts(sameRun(inputs), rounds)
	if layouts != nil {
		rep.Layouts, rep.Reshuffle = distinct(layouts), sameRun(inputs).Reshuffle
	}
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
			vb := values(b.File, c, md, rounds, stats.Paired)
			if layouts != nil {
				rep.Rows = append(rep.Rows, stats.NoiseLayouts(m, va, vb, layouts, opt))
			} else {
				rep.Rows = append(rep.Rows, stats.NoiseAA(m, va, vb, opt))
			}
		}
	}
	return rep, nil
}
