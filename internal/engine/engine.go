package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgscale/pgscale/internal/metrics"
	"github.com/pgscale/pgscale/internal/script"
	"github.com/pgscale/pgscale/internal/secret"
)

// Point is one interval of a step's series.
type Point struct {
	Start     time.Duration // since the measured window began; negative during warm-up
	Length    time.Duration
	Counts    metrics.Counts
	Latency   metrics.Latency
	Histogram string // HdrHistogram V2 compressed base64 of the interval's latencies (µs)
}

// Slice is the counted part of one slice of an A/B run in slices: which
// target served it and what the clients saw.
type Slice struct {
	Target     int
	Start      time.Duration // since the measured window began
	Length     time.Duration
	Counts     metrics.Counts
	Latency    metrics.Latency
	Histogram  string
	ClientUser time.Duration // load generator CPU during the slice
	ClientSys  time.Duration
	// Costs are the differences of Config.SliceMeter's counters over the
	// slice's counted part; nil without a meter.
	Costs map[string]float64
}

// ErrorCount is one distinct error message and how often it was seen.
type ErrorCount struct {
	Kind  metrics.FailKind
	Msg   string
	Count int64
}

// Result is what one step measured.
type Result struct {
	Clients     int
	IO          IOMode        // the I/O mode used (auto resolved)
	Colocated   int           // clients whose thread followed its backend's CPU (Config.Colocate)
	Began       time.Time     // the measured window's start
	Elapsed     time.Duration // the measured window's length
	Total       *metrics.Interval
	Series      []Point       // never nil: empty when no interval was measured
	Slices      []Slice       // with several targets: each measured slice (never nil)
	ClientUser  time.Duration // load generator CPU (getrusage) during the measured window
	ClientSys   time.Duration
	ConnectMean time.Duration // mean time to open a client's first connection (retries included)
	// ConnectElapsed is the connection phase's wall time, from the first
	// connection attempt until every client is connected: pgbench's
	// "initial connection time". Neither it nor the clients' waits count in
	// the measured window.
	ConnectElapsed time.Duration
	// Outages are the stretches in which clients lost their connections to
	// the server and connected again (a restart); none in most steps.
	Outages        []Outage
	Errors         []ErrorCount // distinct errors, in no particular order (never nil)
	Aborted        int          // clients that stopped on an error
	Incomplete     string       // why the step ended early; empty when it completed
	commandOffsets []int
}

// NewResult returns an empty result of a step of clients running prog's
// scripts, for a caller that ran the step elsewhere and fills it (the
// coordinator of agents, which merges what each measured).
func NewResult(clients int, prog *script.Program, io IOMode) *Result {
	scripts := prog.Scripts()
	offsets := make([]int, len(scripts))
	ncmds := 0
	for i, s := range scripts {
		offsets[i] = ncmds
		ncmds += len(s.Commands)
	}
	return &Result{Clients: clients, IO: io, Total: metrics.NewInterval(ncmds, len(scripts)), commandOffsets: offsets,
		Series: []Point{}, Slices: []Slice{}, Errors: []ErrorCount{}}
}

// CommandOffset returns the index in Total.Commands of script si's first command.
func (r *Result) CommandOffset(si int) int { return r.commandOffsets[si] }

// ErrAllClientsFailed is returned (wrapped) when no client could keep going.
var ErrAllClientsFailed = errors.New("every client failed")

// ErrExitOnAbort is returned (wrapped) when a client aborted and
// Config.ExitOnAbort ended the step.
var ErrExitOnAbort = errors.New("a client aborted and the run was set to end at the first abort")

// exitOnAbort ends the step at once because client id aborted.
func (e *engine) exitOnAbort(id int) {
	e.abortOnce.Do(func() {
		e.abortedBy.Store(int32(id) + 1)
		close(e.abortCh)
	})
}

// Run runs one step. It returns a Result even when it also returns an error
// (interrupted, a client could not connect, all clients failed), holding
// what was measured until then and, when it is incomplete, why.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.ReconnectTimeout <= 0 {
		cfg.ReconnectTimeout = 10 * time.Second
	}
	e := newEngine(ctx, &cfg)
	defer e.cancel()
	if e.io == IORaw {
		// A client waiting in a raw system call keeps its P: one P per
		// client and per companion (the probes' sampling, disturbance
		// sessions: they must run at their own times, not in a client's
		// gap between transactions, where a sample finds its backend
		// idle), and no spare. Clients are not locked to their threads and
		// yield every rawYield (to their P's own run queue, goyield), so
		// the collector and timers also run in those gaps when there is no
		// companion, and a yield costs no thread switch: the runtime wakes
		// no thread to look for work, and the yielding thread picks its
		// client up again. Locked clients with
		// a spare P (the engine before) were preempted every 10 ms, and
		// each preemption handed the client between two threads on an
		// overloaded machine: at 8 clients here, single transactions waited
		// 150 to 1 300 ms for that in 4 of 5 runs (docs/engine.md).
		prev := runtime.GOMAXPROCS(cfg.Clients + cfg.Companions)
		defer runtime.GOMAXPROCS(prev)
	}
	return e.run()
}

// ownRecorders is the most clients that get a recorder each; beyond it,
// client i records into recorder i % ownRecorders. A recorder's latency
// histogram (1 µs to an hour at three significant figures) takes 184 KiB,
// and the collector keeps a spare for each recorder: one recorder per
// client cost 370 KiB per client, 3.6 GiB at 10 000 clients. A shared
// recorder's mutex is taken once per transaction by each of its clients
// and held for well under a microsecond, so with 64 of them two clients
// running at the same moment rarely meet at one; up to 64 clients (every
// count the raw I/O hot path was measured at) nothing is shared at all.
const ownRecorders = 64

type engine struct {
	cfg     *Config
	ctx     context.Context // cancelled on interrupt or when the step ends
	cancel  context.CancelFunc
	parent  context.Context
	io      IOMode
	clients []*client

	stop     atomic.Bool      // no new transactions
	stopCh   chan struct{}    // closed with stop, wakes schedule sleeps
	connCfgs []*pgconn.Config // one per target
	target   atomic.Int32     // the target clients use now (slices)
	names    [][]string       // prepared statement names per script and command
	reached  []atomic.Bool    // per target: a connection to it succeeded in this step
	recs     []*metrics.Recorder
	pins     *pins // threads pinned by clients following their backends; nil when they do not
	windowAt atomic.Int64
	endAt    atomic.Int64 // unix nanos after which completions are not counted; 0 = none

	errMu  sync.Mutex
	errs   map[string]*ErrorCount
	events func(string)

	// abortCh is closed by the first client that aborts under ExitOnAbort.
	abortCh   chan struct{}
	abortOnce sync.Once
	abortedBy atomic.Int32 // 1 + the id of that client

	outages outages // clients' lost connections
}

func newEngine(parent context.Context, cfg *Config) *engine {
	ctx, cancel := context.WithCancel(parent)
	e := &engine{cfg: cfg, ctx: ctx, cancel: cancel, parent: parent, errs: map[string]*ErrorCount{}, events: cfg.Events,
		stopCh: make(chan struct{}), abortCh: make(chan struct{})}
	if e.events == nil {
		e.events = func(string) {}
	}
	e.io = cfg.io()
	if e.io == IOAuto {
		e.io = IORaw
		if cfg.Clients > RawMaxClients || usesTLS(cfg) {
			e.io = IONetpoll
		}
	}
	for _, tc := range cfg.targets() {
		c := tc.Copy()
		if c.RuntimeParams["application_name"] == "" {
			c.RuntimeParams["application_name"] = "pgscale"
		}
		if on := cfg.OnNotice; on != nil {
			c.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { on(n) }
		}
		d := &net.Dialer{Timeout: tc.ConnectTimeout, KeepAlive: 5 * time.Minute}
		bound := d // over TCP: bound to SourceAddr when set
		if cfg.SourceAddr != nil {
			b := *d
			b.LocalAddr = &net.TCPAddr{IP: cfg.SourceAddr}
			bound = &b
		}
		dial := dialPoll
		if e.io == IORaw {
			dial = dialRaw
		}
		c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if strings.HasPrefix(network, "tcp") {
				return dial(ctx, bound, network, addr)
			}
			return dial(ctx, d, network, addr)
		}
		e.connCfgs = append(e.connCfgs, c)
	}
	if e.io == IORaw && (cfg.colocate() == ColocateOn || cfg.colocate() == ColocateAuto && cfg.Clients > 1) {
		e.pins = newPins()
	}
	e.reached = make([]atomic.Bool, len(e.connCfgs))
	for si, s := range cfg.Program.Scripts() {
		e.names = append(e.names, make([]string, len(s.Commands)))
		for pc := range s.Commands {
			e.names[si][pc] = fmt.Sprintf("P%d_%d", si, pc)
		}
	}
	return e
}

func (e *engine) stmtName(si, pc int) string { return e.names[si][pc] }

func usesTLS(cfg *Config) bool {
	for _, c := range cfg.targets() {
		if c.TLSConfig != nil {
			return true
		}
		for _, f := range c.Fallbacks {
			if f.TLSConfig != nil {
				return true
			}
		}
	}
	return false
}

func (e *engine) noteError(kind metrics.FailKind, err error) {
	e.noteMessage(kind, secret.Redact(err.Error()))
}

// noteMessage counts one error by its message, already redacted (and
// placed in its script: placedMessage).
func (e *engine) noteMessage(kind metrics.FailKind, msg string) {
	e.errMu.Lock()
	defer e.errMu.Unlock()
	if ec, ok := e.errs[msg]; ok {
		ec.Count++
		return
	}
	if len(e.errs) < 100 {
		e.errs[msg] = &ErrorCount{Kind: kind, Msg: msg, Count: 1}
	}
}

func (e *engine) run() (*Result, error) {
	cfg := e.cfg
	res := NewResult(cfg.Clients, cfg.Program, e.io)
	scripts, offsets, ncmds := cfg.Program.Scripts(), res.commandOffsets, len(res.Total.Commands)

	if e.pins != nil {
		e.pins.begin()
		defer func() {
			e.pins.restore()
			for _, c := range e.clients {
				if c.fol.pinned {
					res.Colocated++
				}
			}
		}()
	}

	// Connect every client first; the clock starts when all are connected.
	e.recs = make([]*metrics.Recorder, min(cfg.Clients, ownRecorders))
	for i := range e.recs {
		e.recs[i] = metrics.NewRecorder(ncmds, len(scripts))
	}
	e.clients = make([]*client, cfg.Clients)
	for i := range e.clients {
		e.clients[i] = newClient(e, cfg.FirstClient+i, ncmds, offsets, e.recs[i%len(e.recs)])
	}
	var err error
	res.ConnectElapsed, err = e.connectAll()
	if err != nil {
		res.Errors = e.errorList()
		if e.parent.Err() != nil {
			res.Incomplete = "interrupted while connecting"
			return res, e.parent.Err()
		}
		res.Incomplete = "could not connect every client: " + secret.Redact(err.Error())
		return res, err
	}
	var connSum time.Duration
	for _, c := range e.clients {
		connSum += c.firstConnect
	}
	res.ConnectMean = connSum / time.Duration(cfg.Clients)
	if os.Getenv("GOGC") == "" {
		// A garbage collection stops every client for a moment, and a
		// client it stops may resume on another thread, away from its
		// backend's CPU. The clients allocate nothing per transaction, but
		// the collector's histogram encoding takes about 0.3 MB per
		// interval, and with a heap of a few MB the default collected every
		// 5 s at 8 clients. Collect once the clients are connected (the
		// connection phase's garbage goes, and the heap that stays is what
		// the clients hold), and let the heap grow to five times that
		// during the step: 3.8 % more throughput at 8 clients here (8
		// interleaved rounds of 10 s). Collecting only now keeps the
		// connection phase, which makes garbage in proportion to the
		// clients, under the default.
		runtime.GC()
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}

	if cfg.Quiesce != nil {
		if err := e.warmUp(); err != nil {
			return e.stopped(res, err)
		}
		cfg = e.cfg // the window without its warm-up
	}
	start := time.Now()
	if cfg.Barrier != nil {
		if start, err = cfg.Barrier(e.ctx); err != nil {
			return e.stopped(res, err)
		}
	}
	window := start.Add(cfg.Warmup)
	e.windowAt.Store(window.UnixNano())
	if cfg.Duration > 0 && len(e.connCfgs) == 1 {
		e.endAt.Store(window.Add(cfg.Duration).UnixNano()) // with slices, the collector tells it (lastSlice)
	}
	if len(e.connCfgs) > 1 {
		e.target.Store(int32(cfg.SliceTarget(0)))
	}
	if cfg.OnStart != nil {
		cfg.OnStart(start, window)
	}
	done, release, closed := e.runClients(start, cfg.Quiesce != nil || cfg.AtEnd != nil)
	e.collect(res, start, window, done)
	var endErr error
	if cfg.Quiesce != nil && e.parent.Err() == nil {
		endErr = cfg.Quiesce(WindowEnd)
	}
	if cfg.AtEnd != nil && e.parent.Err() == nil {
		cfg.AtEnd()
	}
	res.Outages = e.outageList(window, window.Add(res.Elapsed))
	close(release)
	closed.Wait()
	for _, c := range e.clients {
		if c.aborted {
			res.Aborted++
		}
	}
	res.Errors = e.errorList()
	switch {
	case e.parent.Err() != nil:
		res.Incomplete = "interrupted"
		return res, e.parent.Err()
	case e.abortedBy.Load() > 0:
		res.Incomplete = fmt.Sprintf("client %d aborted, and the run was set to end at the first abort: %s", e.abortedBy.Load()-1, mostFrequent(res.Errors))
		return res, fmt.Errorf("%w (client %d)", ErrExitOnAbort, e.abortedBy.Load()-1)
	case res.Aborted == cfg.Clients:
		res.Incomplete = fmt.Sprintf("all %d clients stopped on errors", cfg.Clients)
		if cfg.Clients == 1 {
			res.Incomplete = "the client stopped on an error"
		}
		return res, fmt.Errorf("%w: %s", ErrAllClientsFailed, mostFrequent(res.Errors))
	case endErr != nil:
		res.Incomplete = endErr.Error()
		return res, endErr
	}
	return res, nil
}

// runClients starts every client that has not aborted on its
// transactions from start. done is closed when all have stopped running
// them; then each disconnects, with hold once release is closed, and
// closed is done when all have.
func (e *engine) runClients(start time.Time, hold bool) (done, release chan struct{}, closed *sync.WaitGroup) {
	done, release, closed = make(chan struct{}), make(chan struct{}), &sync.WaitGroup{}
	var running sync.WaitGroup
	for _, c := range e.clients {
		running.Add(1)
		closed.Add(1)
		go func(c *client) {
			defer closed.Done()
			if !c.aborted {
				c.run(start)
			}
			running.Done()
			if hold {
				<-release
			}
			c.closeAll()
		}(c)
	}
	go func() { running.Wait(); close(done) }()
	return done, release, closed
}

// waitClients waits for the clients to finish their transactions in flight;
// after a grace period (or at once on interrupt) it breaks their connections.
func (e *engine) waitClients(done <-chan struct{}) {
	grace := 5 * time.Second
	if e.parent.Err() != nil || e.abortedBy.Load() > 0 {
		grace = 0
	}
	select {
	case <-done:
		return
	case <-time.After(grace):
	case <-e.parent.Done():
	}
	e.cancel()
	for _, c := range e.clients {
		c.interrupt()
	}
	<-done
}

// mostFrequent is the message of the error seen most often (the first by
// message among equals): the one that names why every client stopped.
func mostFrequent(errs []ErrorCount) string {
	if len(errs) == 0 {
		return "unknown error"
	}
	best := errs[0]
	for _, e := range errs[1:] {
		if e.Count > best.Count || e.Count == best.Count && e.Msg < best.Msg {
			best = e
		}
	}
	return best.Msg
}

func (e *engine) errorList() []ErrorCount {
	e.errMu.Lock()
	defer e.errMu.Unlock()
	out := make([]ErrorCount, 0, len(e.errs))
	for _, ec := range e.errs {
		out = append(out, *ec)
	}
	return out
}
