package disturb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/usage"
)

// Request is what the user asked for: built-ins as NAME[=ARG]@START[-END][:SESSIONS]
// and script files as FILE@START[-END][:SESSIONS], each run in every
// step.
type Request struct {
	Builtins []string
	Files    []string
}

// Empty reports whether no disturbance was asked for.
func (r Request) Empty() bool { return len(r.Builtins)+len(r.Files) == 0 }

// SpecError is a disturbance asked for that cannot be: Spec as given,
// among the built-ins when Builtin, else the script files, and Err why.
// An empty Spec is all of them (ErrUntimed). The command line words it in
// the flag that gives it.
type SpecError struct {
	Builtin bool
	Spec    string
	Err     error
}

// Error names the disturbance and says why.
func (e *SpecError) Error() string {
	if e.Spec == "" {
		return "disturbances: " + e.Err.Error()
	}
	return fmt.Sprintf("disturbance %q: %v", e.Spec, e.Err)
}

// Unwrap returns why.
func (e *SpecError) Unwrap() error { return e.Err }

// ErrUntimed is disturbances asked of a run of a number of transactions:
// their windows are placed in time.
var ErrUntimed = errors.New("windows are placed in time, and a run of a number of transactions runs for an unknown time")

// specError is the usage error of disturbance spec, refused because of
// why.
func specError(builtin bool, spec string, why error) error {
	return usage.Wrap(&SpecError{Builtin: builtin, Spec: spec, Err: why})
}

// Parse reads every disturbance of r and checks its window against a
// step's measured duration (0 with a number of transactions, which
// windows cannot be placed in). Every error is a usage error, a
// SpecError.
func Parse(r Request, duration time.Duration, transactions int) ([]Disturbance, error) {
	if r.Empty() {
		return nil, nil
	}
	if transactions > 0 && duration <= 0 {
		return nil, specError(len(r.Builtins) > 0, "", ErrUntimed)
	}
	var ds []Disturbance
	for _, s := range r.Builtins {
		d, err := parseBuiltin(s)
		if err != nil {
			return nil, specError(true, s, err)
		}
		ds = append(ds, d)
	}
	for _, s := range r.Files {
		d, err := parseFile(s)
		if err != nil {
			return nil, specError(false, s, err)
		}
		ds = append(ds, d)
	}
	if err := CheckSchedule(ds, duration); err != nil {
		var se *ScheduleError
		if errors.As(err, &se) {
			d := ds[se.Index]
			return nil, specError(d.Builtin, d.Spec, errors.New(se.Msg))
		}
		return nil, usage.Wrap(err)
	}
	return ds, nil
}

func parseBuiltin(s string) (Disturbance, error) {
	spec, err := ParseSpec(s)
	if err != nil {
		return Disturbance{}, err
	}
	name, arg, _ := strings.Cut(spec.Head, "=")
	def, err := Find(name)
	if err != nil {
		return Disturbance{}, err
	}
	if err := def.CheckArg(arg); err != nil {
		return Disturbance{}, err
	}
	sc, err := script.Parse("disturbance:"+def.Name, def.Script)
	if err != nil {
		return Disturbance{}, fmt.Errorf("built-in %s: %w", def.Name, err) // a bug, not the user's
	}
	return Disturbance{
		Name: def.Name, Builtin: true, Spec: s, Stresses: def.Stresses, Script: sc, Hold: def.Hold,
		Window: spec.Window, Sessions: spec.Sessions, def: &def, arg: arg,
	}, nil
}

func parseFile(s string) (Disturbance, error) {
	spec, err := ParseSpec(s)
	if err != nil {
		return Disturbance{}, err
	}
	src, err := os.ReadFile(spec.Head)
	if err != nil {
		return Disturbance{}, fmt.Errorf("cannot read script: %v", err)
	}
	sc, err := script.Parse(spec.Head, string(src))
	if err != nil {
		return Disturbance{}, err
	}
	if err := CheckScript(sc); err != nil {
		return Disturbance{}, err
	}
	return Disturbance{Name: spec.Head, Spec: s, Script: sc, Window: spec.Window, Sessions: spec.Sessions}, nil
}

// Sessions is the number of connections the disturbances open at once.
func Sessions(ds []Disturbance) int {
	n := 0
	for _, d := range ds {
		n += d.Sessions
	}
	return n
}

// Config is what the disturbances need at run time.
type Config struct {
	// Conn is the target the sessions connect to.
	Conn *pgconn.Config
	// Scale, Seed and Defines fill :scale, the scripts' random state and
	// -D's variables, as for the workload; a built-in's own variables go
	// on top of Defines.
	Scale   int
	Seed    uint64
	Defines map[string]string
	// Events, when set, receives one-line notices (a window could not
	// start).
	Events func(string)
}

// New returns the Disturber that runs ds in every step. A built-in whose
// table argument was left out runs on the biggest table of the database,
// looked up through connect.
func New(ctx context.Context, ds []Disturbance, cfg Config, connect func(context.Context) (*pgconn.PgConn, error)) (*Disturber, error) {
	ds = append([]Disturbance(nil), ds...)
	for i := range ds {
		d := &ds[i]
		if d.def != nil {
			var conn *pgconn.PgConn
			if d.def.Arg == TableArg && d.arg == "" {
				c, err := connect(ctx)
				if err != nil {
					return nil, err
				}
				conn = c
			}
			vars, err := d.def.Vars(ctx, conn, d.arg)
			if conn != nil {
				conn.Close(ctx)
			}
			if err != nil {
				return nil, specError(d.Builtin, d.Spec, err)
			}
			d.Defines = vars
		}
		d.Defines = mergeDefines(cfg.Defines, d.Defines)
	}
	return &Disturber{Conn: cfg.Conn, Disturbances: ds, Scale: cfg.Scale, Seed: cfg.Seed, Events: cfg.Events}, nil
}

// mergeDefines returns -D's variables with a built-in's own on top; nil
// when there are none.
func mergeDefines(run, own map[string]string) map[string]string {
	if len(run)+len(own) == 0 {
		return nil
	}
	m := make(map[string]string, len(run)+len(own))
	for k, v := range run {
		m[k] = v
	}
	for k, v := range own {
		m[k] = v
	}
	return m
}
