package report

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/probeid"
	"github.com/pgscale/pgscale/internal/result"
)

func init() { registerWriter(probeid.Locks, writeLocks) }

// writeLocks writes what the pg_locks snapshots saw: relation locks
// outside the fast path, and the locks waited for.
func writeLocks(pg page, s result.Step, _ diagnose.Figures) {
	l := s.Probes.Locks()
	if l == nil {
		return
	}
	line := fmt.Sprintf("%d snapshots, up to %d backends holding locks; weak relation locks outside the fast path: up to %d per backend (mean %.1f); fast-path slots %s (%sup to %d used)",
		l.Snapshots, l.Backends, l.MaxSlowWeak, l.MeanSlowWeak, slotCount(l), slotsFrom(l), l.MaxFastPath)
	if l.Exhausted > 0 {
		line += fmt.Sprintf("; fast-path slots exhausted in %d backend snapshots", l.Exhausted)
	}
	if len(l.Waiting) > 0 {
		var ws []string
		for _, x := range l.Waiting {
			ws = append(ws, fmt.Sprintf("%s %s ×%d", x.LockType, x.Mode, x.Count))
		}
		line += "; waiting: " + strings.Join(ws, ", ")
	}
	pg.item("locks", line)
}

// slotCount is the fast-path slot count as known: "at least N" when it
// was only observed.
func slotCount(l *result.Locks) string {
	if l.FastPathSlotsFrom == "observed" {
		return fmt.Sprintf("at least %d", l.FastPathSlots)
	}
	return fmt.Sprint(l.FastPathSlots)
}

// slotsFrom says where the slot count came from, "the build's; ", or
// nothing for files that did not record it.
func slotsFrom(l *result.Locks) string {
	switch l.FastPathSlotsFrom {
	case "build":
		return "the build's; "
	case "version":
		return "the version's; "
	case "observed":
		return "observed, more than the version's; "
	}
	return ""
}
