package cli

import (
	"github.com/spf13/pflag"

	"github.com/pgscale/pgscale/internal/plan"
)

// disturbFlags schedule disturbances (DDL churn, checkpoints...) in timed
// windows of each step.
type disturbFlags struct{}

func (d *disturbFlags) register(fs *pflag.FlagSet) {}

// observers returns the disturbances to run beside each step on tgt.
func (d *disturbFlags) observers(tgt *openTarget) ([]plan.Observer, error) { return nil, nil }
