// Package observe is what a run tells the world while it goes: the events a
// runner emits (a step starting and ending, each interval, a round
// starting, a notice) for live output, and the Watcher interface of what
// watches each step from beside the load (probes, disturbances). It holds
// no behaviour; runners emit, report renders, probe and disturb watch.
package observe

import (
	"context"
	"time"

	"github.com/pgscale/pgscale/internal/result"
)

// StepInfo tells a Watcher about the step it watches.
type StepInfo struct {
	Index    int           // 0-based position in the sweep
	Round    int           // the A/B round, 1-based; 0 outside A/B rounds
	Clients  int           // client count
	Start    time.Time     // when transactions begin (warm-up included)
	Window   time.Time     // when the measured window begins
	Duration time.Duration // the measured window's planned length; 0 with -t
}

// Watcher watches each step from beside the load: server-side probes,
// disturbances. Start is called as the clients start and must return
// quickly (start goroutines); Stop is called when the step has ended and
// adds what it saw to the step's result.
type Watcher interface {
	Start(ctx context.Context, step StepInfo) error
	Stop(ctx context.Context, step *result.Step) error
}

// EdgeWatcher is a Watcher that also acts at the edges of each step's
// measured window while no transaction runs (counting the server's
// instructions): a step it watches holds its clients between
// transactions at both edges (engine.Config.Quiesce) while Edge runs.
type EdgeWatcher interface {
	Watcher
	// Edges reports whether the watcher needs the edges at all.
	Edges() bool
	// Edge is called at the window's start (start true), before Start,
	// and at its end, before Stop; it may block.
	Edge(ctx context.Context, step StepInfo, start bool) error
}

// EndWatcher is a Watcher that takes its last look at a step while the
// clients are still connected. A step whose end is not planned (a number
// of transactions, -t) calls End once every client has run its last
// transaction, before any disconnects, and the clients wait while it
// runs; Stop follows after they have gone. A step with a planned end does
// not call it: the watcher acts before that end.
type EndWatcher interface {
	Watcher
	End(ctx context.Context, step StepInfo)
}

// CompanionWatcher is a Watcher whose goroutines run while the step's
// clients do (probes sampling the server, disturbance sessions) and must
// run when their time comes. With raw client I/O each client holds a P of
// the Go runtime while it waits for its server, and gives it up only
// between transactions; a goroutine without a P of its own then runs only
// in those gaps, so a probe sampling what the backends do saw them only
// while they were idle (engine.Config.Companions).
type CompanionWatcher interface {
	Watcher
	// Companions is how many such goroutines need a P of their own
	// during a step: 0 when none runs.
	Companions() int
}

// Observer receives a run's events as they happen. Observe may be called
// from several goroutines at once and must not block for long: the
// collector that ends each interval waits for it.
type Observer interface {
	Observe(Event)
}

// Func adapts a function to an Observer.
type Func func(Event)

// Observe calls f(e).
func (f Func) Observe(e Event) { f(e) }

// Discard is an Observer that drops every event.
var Discard Observer = Func(func(Event) {})

// Event is one of the types below.
type Event interface{ event() }

// Notice is a one-line message for the user: a cluster starting, data
// being created, a client reconnecting, a probe that cannot run. Server
// says it is a message from the server (a NOTICE or WARNING, Text in
// libpq's words); Failure, when set, is the client error Text tells of.
type Notice struct {
	Text    string
	Server  bool
	Failure *Failure
}

// RunStart says a sweep is about to measure: its target is open and its
// data prepared, so File holds everything known before the first step
// (command, environment, target, workload). Path is where the result file
// will be written.
type RunStart struct {
	File *result.File
	Path string
}

// ABStart says an A/B run is about to measure, and how long it will take.
type ABStart struct {
	Targets []string
	Rounds  int
	// Auto says the run rounds until decided: Rounds is then the most it
	// takes, and Total the most time.
	Auto    bool
	Clients []int
	// Duration and Warmup are each step's measured time per target and its
	// warm-up; Duration is 0 with a transaction count.
	Duration, Warmup time.Duration
	// Slice is the slice length of a run in slices; 0 for whole-step turns.
	Slice time.Duration
	// Total is the run's planned length; 0 when it cannot be known (-t).
	// It leaves out the time it takes to re-create clusters.
	Total time.Duration
	// Reshuffle, when positive, says the ephemeral clusters are
	// re-created every Reshuffle rounds (a new layout); Layouts is how
	// many layouts the rounds run on.
	Reshuffle, Layouts int
}

// CellStart says a cell of a suite starts: its key ("partitions=32") and
// its place in the suite.
type CellStart struct {
	Index, Cells int
	Key          string
}

// RoundStart says a round of an A/B run starts: one target's turn through
// the whole sweep, or (Target empty) one step of every target in slices.
type RoundStart struct {
	Round, Rounds int
	// Auto says Rounds is the most a run that rounds until decided takes.
	Auto   bool
	Target string
	Slice  time.Duration
}

// StepStart says a step starts. Round and Target are set in A/B runs.
type StepStart struct {
	Index, Steps, Clients int
	Round                 int
	Target                string
}

// Connecting says how far a step's connection phase has come, while it
// lasts: Connected of Clients have their connections, Elapsed after the
// phase began. Target is set in A/B runs with whole-step turns.
type Connecting struct {
	Clients, Connected int
	Elapsed            time.Duration
	Target             string
}

// Interval is one interval of a step as it ends: pgbench's -P line.
type Interval struct {
	Clients int
	Target  string        // A/B runs
	Elapsed time.Duration // since the clients started, warm-up included
	Length  time.Duration
	Warmup  bool
	// Transactions and Failed count the interval's transactions.
	Transactions, Failed   int64
	LatMeanMs, LatStddevMs float64
	LagMeanMs              float64
	Skipped                int64
	Retried, Retries       int64
	// Rate, Limit and Tries say which of lag, skipped and retries apply
	// (-R, -L, --max-tries other than 1), as pgbench shows them only then.
	Rate, Limit, Tries bool
	// Edges are the disturbance windows that opened or closed in it.
	Edges []Edge
}

// Edge is a disturbance window opening (Start) or closing.
type Edge struct {
	Name  string
	Start bool
}

// StepEnd says a step ended; Step is what goes into the result file.
type StepEnd struct {
	Step   result.Step
	Target string // A/B runs
}

// RunEnd says a sweep ended and was diagnosed: File is the result file as
// written, complete or not.
type RunEnd struct{ File *result.File }

func (Notice) event()     {}
func (RunStart) event()   {}
func (ABStart) event()    {}
func (RoundStart) event() {}
func (CellStart) event()  {}
func (StepStart) event()  {}
func (Connecting) event() {}
func (Interval) event()   {}
func (StepEnd) event()    {}
func (RunEnd) event()     {}
