package compare

import (
	"math"
	"sort"

	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/stats"
)

// roundLayouts returns the cluster layout of each of rounds in a
// reshuffled run, nil when the run was not reshuffled.
func roundLayouts(run *result.AB, rounds []int) []int {
	if run.Reshuffle <= 0 {
		return nil
	}
	out := make([]int, len(rounds))
	for i, r := range rounds {
		out[i] = run.LayoutOf(r)
	}
	return out
}

// stepLayouts maps each round of a reshuffled run to its cluster layout,
// for pairs of steps paired by round; nil otherwise.
func stepLayouts(run *result.AB, method stats.Method) map[int]int {
	if run == nil || run.Reshuffle <= 0 || method != stats.Paired {
		return nil
	}
	out := map[int]int{}
	for _, l := range run.Layouts {
		for _, r := range l.Rounds {
			out[r] = l.Layout
		}
	}
	return out
}

func distinct(xs []int) int {
	seen := map[int]bool{}
	for _, x := range xs {
		seen[x] = true
	}
	return len(seen)
}

// pairedSteps returns both files' steps with the given client count that
// belong together: the same round (Paired), or the complete steps in file
// order, as many as both have.
func pairedSteps(base, cand *result.File, clients int, rounds []int, method stats.Method) ([]result.Step, []result.Step) {
	bs, cs := stepsOf(base, clients), stepsOf(cand, clients)
	var b, c []result.Step
	if method != stats.Paired {
		for i := 0; i < min(len(bs), len(cs)); i++ {
			b, c = append(b, *bs[i]), append(c, *cs[i])
		}
		return b, c
	}
	byRound := func(steps []*result.Step) map[int]*result.Step {
		m := map[int]*result.Step{}
		for _, s := range steps {
			if _, dup := m[s.Round]; !dup {
				m[s.Round] = s
			}
		}
		return m
	}
	bm, cm := byRound(bs), byRound(cs)
	for _, r := range rounds {
		if bm[r] != nil && cm[r] != nil {
			b, c = append(b, *bm[r]), append(c, *cm[r])
		}
	}
	return b, c
}

// stepClients returns the client counts of f's complete steps, in the order
// they first ran.
func stepClients(f *result.File) []int {
	var out []int
	seen := map[int]bool{}
	for _, s := range f.Steps {
		if s.Complete && !seen[s.Clients] {
			seen[s.Clients] = true
			out = append(out, s.Clients)
		}
	}
	return out
}

// sameRun returns the A/B block the inputs share, or nil when they do not
// all come from one A/B run.
func sameRun(inputs []Input) *result.AB {
	first := inputs[0].File.AB
	if first == nil {
		return nil
	}
	for _, in := range inputs[1:] {
		if in.File.AB == nil || in.File.AB.Run != first.Run {
			return nil
		}
	}
	return first
}

// completeRounds returns the rounds in which every input has a complete
// step for every client count.
func completeRounds(inputs []Input, clients []int) []int {
	have := map[int]int{} // round -> complete (input, clients) pairs
	for _, in := range inputs {
		seen := map[[2]int]bool{}
		for _, s := range in.File.Steps {
			if s.Complete && s.Round > 0 && !seen[[2]int{s.Round, s.Clients}] {
				seen[[2]int{s.Round, s.Clients}] = true
				have[s.Round]++
			}
		}
	}
	var out []int
	for r, n := range have {
		if n == len(inputs)*len(clients) {
			out = append(out, r)
		}
	}
	sort.Ints(out)
	return out
}

// stepsOf returns f's complete steps with the given client count.
func stepsOf(f *result.File, clients int) []*result.Step {
	var out []*result.Step
	for i := range f.Steps {
		if s := &f.Steps[i]; s.Complete && s.Clients == clients {
			out = append(out, s)
		}
	}
	return out
}

// values returns a measure's values at one client count: one per round, in
// rounds order (Paired), or one per complete step (Independent).
func values(f *result.File, clients int, md MeasureDef, rounds []int, method stats.Method) []float64 {
	steps := stepsOf(f, clients)
	if method != stats.Paired {
		out := make([]float64, len(steps))
		for i, s := range steps {
			out[i] = md.Value(s)
		}
		return out
	}
	byRound := map[int]*result.Step{}
	for _, s := range steps {
		if _, dup := byRound[s.Round]; !dup {
			byRound[s.Round] = s
		}
	}
	out := make([]float64, len(rounds))
	for i, r := range rounds {
		out[i] = math.NaN()
		if s := byRound[r]; s != nil {
			out[i] = md.Value(s)
		}
	}
	return out
}

func allNaN(xs []float64) bool {
	for _, x := range xs {
		if !math.IsNaN(x) {
			return false
		}
	}
	return true
}

func finite(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

// Clients returns the client counts of f's complete steps, in the order
// they first ran.
func Clients(f *result.File) []int { return stepClients(f) }

// Values returns a measure's value in each of f's complete steps with the
// given client count, in file order (NaN where a step lacks it).
func Values(f *result.File, clients int, md MeasureDef) []float64 {
	return values(f, clients, md, nil, stats.Independent)
}
