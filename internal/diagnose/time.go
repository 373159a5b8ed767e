package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pgscale/pgscale/internal/prose"
	"github.com/pgscale/pgscale/internal/result"
)

// BackendTime is where the client backends' time went during a step, as
// shares of one whole — every backend's wall time over the probes' window
// — that add up to 1: on a CPU, runnable but waiting for one, and off CPU
// in each wait class ("Client" is the wait for the client's next query,
// idle sessions included).
//
// With the server's processes in view (Schedstat) the first two come from
// the kernel's schedstat of the client backends and the off-CPU rest is
// split in the proportions of the wait samples' classes; without them every
// share is the wait samples' own, and OnCPU holds "on a CPU or waiting for
// one" (pg_wait_sampling cannot tell the two apart).
type BackendTime struct {
	Known     bool
	Schedstat bool
	// Backends is the number of client backends the shares are of, WallS
	// their wall time in all.
	Backends int
	WallS    float64
	OnCPU    float64
	CPUWait  float64
	// Waits are the off-CPU shares by wait class, Events by "Type:Event".
	Waits  map[string]float64
	Events map[string]float64
}

// ContentionClasses are the wait classes counted as time lost to waits:
// lightweight and heavyweight locks, buffer pins, I/O and waits on other
// processes. Client waits (the client's turn), timeouts (the workload's
// own sleeps) and the rest are not contention.
var ContentionClasses = []string{"LWLock", "Lock", "BufferPin", "IO", "IPC"}

// Contention is the share of the backends' time in contention waits.
func (t BackendTime) Contention() float64 {
	s := 0.0
	for _, c := range ContentionClasses {
		s += t.Waits[c]
	}
	return s
}

// In is the share of the backends' time in one wait class.
func (t BackendTime) In(class string) float64 { return t.Waits[class] }

// backendTime splits the backends' time of a step from its figures.
func backendTime(s result.Step, f Figures) BackendTime {
	t := BackendTime{Waits: map[string]float64{}, Events: map[string]float64{}}
	if !f.HasWaits {
		return t
	}
	t.Known = true
	off := 1 - f.CPUSample // the wait samples' off-CPU share
	t.OnCPU = f.CPUSample
	if kb := clientBackends(s); kb != nil && f.ElapsedS > 0 && kb.OnCPUS+kb.RunQueueWaitS > 0 {
		n := kb.Processes
		if n <= 0 || n > s.Clients {
			// A pooler's pool is smaller than the clients; with -C a
			// backend per transaction comes and goes, but at most one
			// per client at a time.
			n = min(max(n, 1), s.Clients)
		}
		t.Schedstat, t.Backends = true, n
		t.WallS = float64(n) * f.ElapsedS
		t.OnCPU = min(kb.OnCPUS/t.WallS, 1)
		t.CPUWait = min(kb.RunQueueWaitS/t.WallS, 1-t.OnCPU)
		rest := 1 - t.OnCPU - t.CPUWait
		scale := 0.0
		if off > 0 {
			scale = rest / off
		}
		for cl, sh := range f.ClassShare {
			t.Waits[cl] = sh * scale
		}
		for _, e := range f.TopEvents {
			if e.Name != "CPU" {
				t.Events[e.Name] = e.Share * scale
			}
		}
		if off <= 0 && rest > 0 {
			// Off CPU, yet every sample found the backends active: time
			// in the kernel outside any wait event (page faults, socket
			// writes), which the samples count as CPU.
			t.Waits["none"] = rest
		}
		return t
	}
	for cl, sh := range f.ClassShare {
		t.Waits[cl] = sh
	}
	for _, e := range f.TopEvents {
		if e.Name != "CPU" {
			t.Events[e.Name] = e.Share
		}
	}
	return t
}

// clientBackends is the client backends' process group of a step, nil
// without one.
func clientBackends(s result.Step) *result.ProcGroup {
	if s.Probes == nil || s.Probes.Process() == nil || s.Probes.Process().Server == nil {
		return nil
	}
	for i, k := range s.Probes.Process().Server.ByKind {
		if k.Kind == result.KindClientBackend {
			return &s.Probes.Process().Server.ByKind[i]
		}
	}
	return nil
}

// TopIn returns the wait event of a class with the largest share of the
// backends' time.
func (t BackendTime) TopIn(class string) (string, float64, bool) {
	best, share := "", 0.0
	for name, sh := range t.Events {
		if strings.HasPrefix(name, class+":") && (sh > share || (sh == share && name < best)) {
			best, share = name, sh
		}
	}
	return best, share, best != ""
}

// String says where the time went, every share of the same whole:
// "backends' time (2 backends × 10.0 s): on a CPU 45%, waiting for a CPU
// 5%, waiting for the client 50%, lock and I/O waits 0%".
func (t BackendTime) String() string {
	if !t.Known {
		return "backends' time: not known (no wait samples)"
	}
	var parts []string
	head := "backends' time, of the wait samples"
	if t.Schedstat {
		head = fmt.Sprintf("backends' time (%s × %.1f s; schedstat, off-CPU split by the wait samples)", prose.Count(t.Backends, "backend"), t.WallS/float64(t.Backends))
		parts = append(parts, "on a CPU "+prose.Share(t.OnCPU), "waiting for a CPU "+prose.Share(t.CPUWait))
	} else {
		parts = append(parts, "on a CPU or waiting for one "+prose.Share(t.OnCPU))
	}
	type cs struct {
		name  string
		share float64
	}
	var rest []cs
	for cl, sh := range t.Waits {
		rest = append(rest, cs{cl, sh})
	}
	sort.Slice(rest, func(i, j int) bool {
		if rest[i].share != rest[j].share {
			return rest[i].share > rest[j].share
		}
		return rest[i].name < rest[j].name
	})
	contention := false
	for _, c := range rest {
		if c.share < 0.005 && c.name != "Client" {
			continue
		}
		parts = append(parts, waitName(c.name)+" "+prose.Share(c.share))
		contention = contention || isContention(c.name)
	}
	if !contention {
		parts = append(parts, "lock, LWLock and I/O waits "+prose.Share(t.Contention()))
	}
	return head + ": " + strings.Join(parts, ", ")
}

// waitName names a wait class as a share of time reads.
func waitName(class string) string {
	switch class {
	case "Client":
		return "waiting for the client"
	case "LWLock":
		return "LWLock waits"
	case "Lock":
		return "lock waits"
	case "IO":
		return "I/O waits"
	case "Timeout":
		return "sleeping (Timeout)"
	case "none":
		return "off CPU outside any wait event"
	}
	return class + " waits"
}

func isContention(class string) bool {
	for _, c := range ContentionClasses {
		if c == class {
			return true
		}
	}
	return false
}
