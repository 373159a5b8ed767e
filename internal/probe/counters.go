package probe

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

// countersProbe counts cycles and instructions over the whole machine with
// perf_event_open, one counter per CPU. Where the CPU or the hypervisor
// does not expose them (this project's 2-core VM), every step says
// "not supported" with the kernel's reason, never 0.
type countersProbe struct {
	reason string  // why not supported; "" when counting
	cycles []event // one per CPU
	instrs []event
	first  [2]reading
	last   [2]reading
}

// event is one open perf counter.
type event struct{ fd int }

// reading is a counter value with the times it was enabled and running,
// to scale for multiplexing.
type reading struct {
	value, enabled, running uint64
}

func newCountersProbe() (*countersProbe, error) {
	p := &countersProbe{}
	var err error
	if p.cycles, err = openSystemWide(unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES); err == nil {
		p.instrs, err = openSystemWide(unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS)
	}
	if err != nil {
		p.close()
		p.reason = err.Error()
	}
	return p, nil
}

// openSystemWide opens one counter of the given type on every CPU, counting
// every process. It needs root or kernel.perf_event_paranoid <= 0.
func openSystemWide(typ uint32, config uint64) ([]event, error) {
	var evs []event
	for cpu := 0; cpu < runtime.NumCPU(); cpu++ {
		fd, err := openCounter(typ, config, -1, cpu)
		if err != nil {
			for _, e := range evs {
				unix.Close(e.fd)
			}
			return nil, err
		}
		evs = append(evs, event{fd})
	}
	return evs, nil
}

// openCounter opens one counting (not sampling) perf event, enabled at once.
func openCounter(typ uint32, config uint64, pid, cpu int) (int, error) {
	attr := unix.PerfEventAttr{
		Type:        typ,
		Config:      config,
		Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING,
	}
	attr.Size = uint32(unsafe.Sizeof(attr))
	fd, err := unix.PerfEventOpen(&attr, pid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return -1, describePerfError(err)
	}
	return fd, nil
}

// describePerfError says in words why a hardware counter cannot be opened.
func describePerfError(err error) error {
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENODEV):
		return fmt.Errorf("not supported: this CPU or hypervisor exposes no such counter (%v)", err)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		level := "?"
		if b, rerr := os.ReadFile("/proc/sys/kernel/perf_event_paranoid"); rerr == nil {
			level = strings.TrimSpace(string(b))
		}
		return fmt.Errorf("not permitted: machine-wide counters need root or kernel.perf_event_paranoid <= 0 (it is %s)", level)
	}
	return fmt.Errorf("perf_event_open: %w", err)
}

func readCounter(fd int) (reading, error) {
	var buf [24]byte
	n, err := unix.Read(fd, buf[:])
	if err != nil {
		return reading{}, err
	}
	if n != len(buf) {
		return reading{}, fmt.Errorf("short read from perf counter: %d bytes", n)
	}
	le := binary.NativeEndian
	return reading{le.Uint64(buf[0:]), le.Uint64(buf[8:]), le.Uint64(buf[16:])}, nil
}

// sum reads every CPU's counter and adds them up.
func sum(evs []event) (reading, error) {
	var r reading
	for _, e := range evs {
		x, err := readCounter(e.fd)
		if err != nil {
			return r, err
		}
		r.value += x.value
		r.enabled += x.enabled
		r.running += x.running
	}
	return r, nil
}

func (p *countersProbe) name() string    { return probeid.Counters.Name }
func (p *countersProbe) backends() []int { return nil }

func (p *countersProbe) close() {
	for _, evs := range [][]event{p.cycles, p.instrs} {
		for _, e := range evs {
			unix.Close(e.fd)
		}
	}
	p.cycles, p.instrs = nil, nil
}

func (p *countersProbe) begin(context.Context, *stepState) (func(<-chan struct{}), error) {
	if p.reason != "" {
		return nil, nil
	}
	var err error
	if p.first[0], err = sum(p.cycles); err == nil {
		p.first[1], err = sum(p.instrs)
	}
	return nil, err
}

func (p *countersProbe) capture(context.Context, *stepState) error {
	if p.reason != "" {
		return nil
	}
	var err error
	if p.last[0], err = sum(p.cycles); err == nil {
		p.last[1], err = sum(p.instrs)
	}
	return err
}

func (p *countersProbe) report(_ context.Context, _ *stepState, out *result.Probes) error {
	if p.reason != "" {
		out.SetCounters(&result.Counters{Supported: false, Reason: p.reason})
		return nil
	}
	cv, cs := delta(p.first[0], p.last[0])
	iv, is := delta(p.first[1], p.last[1])
	out.SetCounters(&result.Counters{Supported: true, Scope: "machine", Cycles: cv, Instructions: iv, Scaled: cs || is})
	return nil
}

// delta is the counter's increase, scaled up when the kernel multiplexed it.
func delta(a, b reading) (uint64, bool) {
	v := b.value - a.value
	en, run := b.enabled-a.enabled, b.running-a.running
	if run == 0 || run == en {
		return v, false
	}
	return uint64(float64(v) * float64(en) / float64(run)), true
}

func init() { register(countersDef) }

var countersDef = def{
	id: probeid.Counters, on: true, flag: "no-counters", evidence: "hardware counters (cycles, instructions)",
	open: func(context.Context, Config, *Set) (probe, error) {
		p, err := newCountersProbe()
		if err != nil {
			return nil, err
		}
		return p, nil
	},
}
