package cli

import (
	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/plan"
)

// probeFlags choose the server-side probes that watch each step.
type probeFlags struct{}

func (p *probeFlags) register(fs *pflag.FlagSet) {}

// observers returns the probes to run beside each step on tgt.
func (p *probeFlags) observers(tgt *openTarget) ([]plan.Observer, error) { return nil, nil }
