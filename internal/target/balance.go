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
// definition, whose configuration only its author knows) is an
// *UnbalancedError.
func (t Spec) Balanced() (Spec, error) {
	b, ok := t.Arg.(balancerArg)
	if !ok {
		return t, &UnbalancedError{Spec: t}
	}
	a, err := b.balanced()
	if err != nil {
		return t, err
	}
	t.Arg = a
	return t, nil
}

// UnbalancedError is a target pgscale cannot derive a balancing variant
// of; Fix says what to give instead (default: a definition that
// balances).
type UnbalancedError struct {
	Spec Spec
	Fix  string
}

func (e *UnbalancedError) Error() string {
	fix := e.Fix
	if fix == "" {
		fix = "give a target that balances reads over the replicas, as examples/proxy/pgbouncer-balanced.yaml does"
	}
	return fmt.Sprintf("balancing reads: pgscale derives that of pgbouncer: (its own pgbouncer) only, not of %s:%s: %s", e.Spec.Kind, e.Spec.Arg, fix)
}
