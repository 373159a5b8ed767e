package compare

import (
	"fmt"

	"github.com/pgscale/pgscale/internal/result"
)

// Pool makes one side of an unpaired comparison out of several runs of the
// same thing (the stored runs of a baseline commit): a copy of the first
// file holding the complete steps of all of them, each counting as one
// value, as Compare counts the steps of a file of another run. It belongs
// to no A/B run, so it is never paired; it is incomplete, with the first
// reason, when one of the runs is. files must not be empty.
func Pool(name string, files []*result.File) Input {
	pooled := *files[0]
	pooled.AB = nil
	pooled.Steps = nil
	pooled.Diagnosis = nil
	pooled.Complete, pooled.Reason = true, ""
	for _, f := range files {
		for _, s := range f.Steps {
			if s.Complete {
				s.Round = 0
				pooled.Steps = append(pooled.Steps, s)
			}
		}
		if !f.Complete && pooled.Complete {
			pooled.Complete, pooled.Reason = false, f.Reason
		}
	}
	if pooled.Finished.Before(files[len(files)-1].Finished) {
		pooled.Finished = files[len(files)-1].Finished
	}
	if len(pooled.Steps) == 0 && pooled.Complete {
		pooled.Complete, pooled.Reason = false, fmt.Sprintf("none of the %d runs has a complete step", len(files))
	}
	return Input{Name: name, File: &pooled}
}
