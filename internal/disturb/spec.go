package disturb

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pgscale/pgscale/internal/script"
)

// Window is when a disturbance runs within every step, counted from the
// start of the step's measured window (after any warm-up), the clock of
// the per-interval series.
type Window struct {
	Start time.Duration
	End   time.Duration // zero: until the step ends
}

// String formats the window as it is written: "15s-30s", or "20s".
func (w Window) String() string {
	if w.End == 0 {
		return fmtSeconds(w.Start)
	}
	return fmtSeconds(w.Start) + "-" + fmtSeconds(w.End)
}

// end returns the window's end in a step of length d.
func (w Window) end(d time.Duration) time.Duration {
	if w.End == 0 {
		return d
	}
	return w.End
}

func fmtSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// Disturbance is one disturbance to run in a window of every step: a script
// run in a loop (or once and held, with Hold) by Sessions sessions of its
// own.
type Disturbance struct {
	Name     string // built-in name, or the script file as given
	Builtin  bool
	Spec     string // as written: "ddl-churn@15s-30s:2"
	Stresses string // built-ins: what it stresses
	Script   *script.Script
	Defines  map[string]string // script variables
	// Hold: each session runs the script once, then keeps its session and
	// the transaction the script left open until the window ends, when the
	// transaction is rolled back.
	Hold     bool
	Window   Window
	Sessions int

	def *Builtin // a built-in's definition
	arg string   // and its argument (empty: the default)
}

// Spec is a disturbance as written on the command line:
// HEAD@START[-END][:SESSIONS], where HEAD is NAME[=ARG] for a built-in or a
// script file.
type Spec struct {
	Head     string
	Window   Window
	Sessions int
}

// ParseSpec parses HEAD@START[-END][:SESSIONS]. Times are durations
// (15s, 1m30s, 500ms) or bare seconds (15, 2.5); SESSIONS defaults to 1.
func ParseSpec(s string) (Spec, error) {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return Spec{}, fmt.Errorf("no window: write NAME@START[-END][:SESSIONS], e.g. ddl-churn@15s-30s")
	}
	spec := Spec{Head: s[:at], Sessions: 1}
	if spec.Head == "" {
		return Spec{}, fmt.Errorf("no name before @")
	}
	rest := s[at+1:]
	malformed := func(why string) (Spec, error) {
		return Spec{}, fmt.Errorf("%q is not START[-END][:SESSIONS] (e.g. 15s-30s:2): %s", rest, why)
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		n, err := strconv.Atoi(rest[i+1:])
		if err != nil || n < 1 {
			return malformed(fmt.Sprintf("sessions %q is not a positive integer", rest[i+1:]))
		}
		spec.Sessions = n
		rest = rest[:i]
	}
	startS, endS, hasEnd := strings.Cut(rest, "-")
	start, err := parseOffset(startS)
	if err != nil {
		return malformed("start " + err.Error())
	}
	spec.Window.Start = start
	if hasEnd {
		end, err := parseOffset(endS)
		if err != nil {
			return malformed("end " + err.Error())
		}
		if end <= start {
			return malformed("the end must come after the start")
		}
		spec.Window.End = end
	}
	return spec, nil
}

// parseOffset parses a time in the step: a duration or bare seconds.
func parseOffset(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("is missing")
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f > 1e6 {
			return 0, fmt.Errorf("%q is out of range", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a time (15s, 1m30s, or seconds)", s)
	}
	return d, nil
}

// ScheduleError says which disturbance cannot be scheduled, and why.
type ScheduleError struct {
	Index int // into the disturbances checked
	Msg   string
}

func (e *ScheduleError) Error() string { return e.Msg }

// CheckSchedule checks that every window lies inside a step of the given
// measured duration and that no two windows of the same disturbance overlap
// (more sessions are asked for with :SESSIONS, not with a second window).
func CheckSchedule(ds []Disturbance, duration time.Duration) error {
	for i, d := range ds {
		w := d.Window
		switch {
		case w.Start >= duration:
			return &ScheduleError{i, fmt.Sprintf("the window starts at %s, at or after the end of the run (-T %s)", fmtSeconds(w.Start), fmtSeconds(duration))}
		case w.End > duration:
			return &ScheduleError{i, fmt.Sprintf("the window ends at %s, after the end of the run (-T %s)", fmtSeconds(w.End), fmtSeconds(duration))}
		case d.Sessions < 1:
			return &ScheduleError{i, "sessions must be at least 1"}
		}
		for j, e := range ds[:i] {
			if e.Name != d.Name {
				continue
			}
			if w.Start < e.Window.end(duration) && e.Window.Start < w.end(duration) {
				return &ScheduleError{i, fmt.Sprintf("overlaps %s; one disturbance runs in one window at a time (ask for more sessions with :SESSIONS)", ds[j].Spec)}
			}
		}
	}
	return nil
}
