package target

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
)

// A proxy's program runs under callgrind as the servers do with --count
// instructions (ProxyOptions.Valgrind): its instructions per transaction
// are counted beside theirs, every process of its tree followed.

// valgrindCommand is the proxy's shell command line under Valgrind:
// setarch, valgrind and its options (files in the proxy's directory),
// then the shell, whose exec of the program Valgrind follows.
func (p *Proxy) valgrindCommand(v *Valgrind) (string, []string) {
	return v.command(p.Dir, "/bin/sh", p.argv()...)
}

// Callgrind sends callgrind's monitor commands to the proxy's process pid
// through vgdb, as its OS user, and returns what vgdb printed (as
// Cluster.Callgrind does for a server's process). It reports an error on
// a proxy not started under Valgrind.
func (p *Proxy) Callgrind(ctx context.Context, pid int, commands ...string) (string, error) {
	v := p.opts.Valgrind
	if v == nil {
		return "", errors.New("the proxy does not run under Valgrind")
	}
	return v.monitor(ctx, p.Dir, p.cred, p.Name, pid, commands)
}

// CallgrindOut is the base name of the callgrind files of the proxy's
// process pid: a dump is BASE.N.
func (p *Proxy) CallgrindOut(pid int) string {
	return filepath.Join(p.Dir, "callgrind.out."+strconv.Itoa(pid))
}

// UnderValgrind reports whether the proxy runs under Valgrind.
func (p *Proxy) UnderValgrind() bool { return p.opts.Valgrind != nil }

// CountedPooler is a pooler run under Valgrind's callgrind (a proxy:
// target, or pgbouncer:, with --count instructions): the instruction
// probe counts its processes beside the server's.
type CountedPooler interface {
	UnderValgrind() bool
	Callgrind(ctx context.Context, pid int, commands ...string) (string, error)
	CallgrindOut(pid int) string
}

// UnderValgrind reports whether pgbouncer runs under Valgrind.
func (p *PgBouncer) UnderValgrind() bool { return p.proxy != nil && p.proxy.UnderValgrind() }

// Callgrind sends callgrind's monitor commands to pgbouncer's process.
func (p *PgBouncer) Callgrind(ctx context.Context, pid int, commands ...string) (string, error) {
	if p.proxy == nil {
		return "", errors.New("pgbouncer is not running")
	}
	return p.proxy.Callgrind(ctx, pid, commands...)
}

// CallgrindOut is the base name of the callgrind files of pgbouncer's
// process pid.
func (p *PgBouncer) CallgrindOut(pid int) string { return p.proxy.CallgrindOut(pid) }
