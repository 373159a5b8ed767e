package target

import "fmt"

// readOnlyArg is an Arg whose target may send any statement to a replica
// (a proxy definition's read_only:, a pgbouncer: with balance=).
type readOnlyArg interface{ readOnly() bool }

// balancerArg is an Arg of a pooler pgscale knows how to make balance
// reads over the replicas of the server it fronts (pgbouncer:).
type balancerArg interface{ balanced() (Arg, error) }

// ReadOnly says the target may send any statement to a replica, so that
// a workload that writes is refused through it before anything starts.
func (t Spec) ReadOnly() bool {
	a, ok := t.Arg.(readOnlyArg)
	return ok && a.readOnly()
}

func (a ProxyArg) readOnly() bool { return a.Def.ReadOnly }

// Balanced is the target's balancing variant: the same pooler, the same
// build and settings, balancing its server connections over the server it
// fronts and that server's streaming replicas (a pgbouncer: target with
// balance=round-robin). A kind pgscale cannot derive it for (a proxy:
// definition, whose configuration only its author knows) is an error
// saying to give the balancing one instead.
func (t Spec) Balanced() (Spec, error) {
	b, ok := t.Arg.(balancerArg)
	if !ok {
		return t, fmt.Errorf("%s:%s has no balancing variant pgscale can derive (it derives one for pgbouncer:, its own pgbouncer): give a definition that balances reads over the replicas (as examples/proxy/pgbouncer-balanced.yaml, with the same build:)",
			t.Kind, t.Arg)
	}
	a, err := b.balanced()
	if err != nil {
		return t, err
	}
	t.Arg = a
	return t, nil
}
