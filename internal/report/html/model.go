package html

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/pgscale/pgscale/internal/flame"
	"github.com/pgscale/pgscale/internal/result"
)

// page is everything the page shows, built from the result files alone
// (build.go). The template and the charts draw from it, and it is embedded
// in the page as JSON, the data the golden tests compare.
type page struct {
	Title string `json:"title"`
	// Diagnoses are the sweeps' diagnoses, which a page without a
	// comparison opens on (the evidence holds each paragraph in the data
	// block).
	Diagnoses []*diagnosisHead `json:"-"`
	// Comparison and Noise are the doc's, laid out; Matrices the doc's
	// own (a suite's).
	Comparison *comparison `json:"comparison,omitempty"`
	Noise      *noiseTable `json:"noise,omitempty"`
	Matrices   []matrix    `json:"matrices,omitempty"`
	Rules      []Rule      `json:"rules,omitempty"`
	Micro      []Micro     `json:"micro,omitempty"`
	Runs       []run       `json:"runs"`
	// Scaling has one series per sweep file and per A/B target.
	Scaling   *scaling   `json:"scaling,omitempty"`
	Timelines []timeline `json:"timelines"`
	Evidence  []evidence `json:"evidence"`
	Profiles  []profile  `json:"profiles,omitempty"`
	// FlameDiffs are the differential flame graphs of A/B runs' profiles.
	FlameDiffs []flameDiff `json:"flame_diffs,omitempty"`
}

// run is one sweep file, or the files of one A/B run.
type run struct {
	ID    string       `json:"id"`
	Kind  string       `json:"kind"` // "sweep" or "ab"
	AB    *abHeader    `json:"ab,omitempty"`
	Files []fileHeader `json:"files"`
}

// abHeader is the A/B run's own record (result.AB), with what the page
// finds across its files.
type abHeader struct {
	*result.AB
	// Missing names targets of the run whose file is not in the page.
	Missing []string `json:"missing,omitempty"`
	// Differ are the settings whose values are not the same in every
	// target's file, each with every target's value ("" when not set).
	Differ []settingDiff `json:"settings_differ,omitempty"`
}

type settingDiff struct {
	Name   string   `json:"name"`
	Values []keyVal `json:"values"` // target name, value
}

// fileHeader says what ran where: the file's own records of its target
// and scripts, and its command, workload and machine as the page words
// them.
type fileHeader struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	Label     string            `json:"label"`
	Command   string            `json:"command"`
	Complete  bool              `json:"complete"`
	Reason    string            `json:"incomplete_reason,omitempty"`
	Started   string            `json:"started"`
	Finished  string            `json:"finished"`
	Pgscale   string            `json:"pgscale_version"`
	Version   int               `json:"result_version"`
	Workload  string            `json:"workload"`
	Scripts   []result.Script   `json:"scripts"`
	Target    result.Target     `json:"target"`
	Machine   string            `json:"machine"`
	Steps     int               `json:"steps"`
	StepsDone int               `json:"steps_complete"`
	Defines   map[string]string `json:"defines,omitempty"`
	Warnings  []string          `json:"warnings,omitempty"`
}

type keyVal struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// scaling is the throughput and p99 latency against clients.
type scaling struct {
	// LogClients is true when the client counts grow geometrically.
	LogClients bool            `json:"log_clients"`
	Clients    []int           `json:"clients"`
	Series     []scalingSeries `json:"series"`
	// PerCPU says some series' speedup is per CPU-second the system had.
	PerCPU bool `json:"per_cpu,omitempty"`
	// IdealLabel names the line of perfect scaling in the speed-up chart:
	// "perfect scaling on 2 cores".
	IdealLabel string `json:"ideal_label,omitempty"`
	// Counted says some series were counted under Valgrind: their
	// throughput and latency are Valgrind's, not the workload's.
	Counted bool `json:"counted,omitempty"`
}

// scalingSeries is one line: a sweep file, or one A/B target with each
// point the median over its rounds.
type scalingSeries struct {
	Label  string `json:"label"`
	Source string `json:"source"`
	// Panel names the A/B run the series is a target of, by its suite
	// cell's parameters when it has them: a page of several A/B runs
	// draws each run's curves on axes of their own ("" for a sweep).
	Panel string `json:"panel,omitempty"`
	// Rounds is, for an A/B target, the rounds of the run; 0 for a sweep.
	Rounds int `json:"rounds,omitempty"`
	// Knee and Peak are the clients diagnose.Knee and the highest point
	// fall on; Knee is 0 when throughput grew to the end.
	Knee int `json:"knee_clients,omitempty"`
	Peak int `json:"peak_clients"`
	// PerCPU says its speedup is of throughput per CPU-second the
	// system had (the diagnosis's PerCPU).
	PerCPU bool `json:"per_cpu,omitempty"`
	// Counted says its server ran under Valgrind (--count instructions):
	// its throughput and latency are Valgrind's, charted nowhere; its
	// instructions per transaction are the measure.
	Counted bool `json:"counted,omitempty"`
	// Baseline marks the line the others of its panel are compared with
	// (their points' VsBase).
	Baseline bool           `json:"baseline,omitempty"`
	Points   []scalingPoint `json:"points"`
	// run and target are the A/B run and target of the line ("" for a
	// sweep); isBase says the target is the run's baseline; workload
	// tells a sweep's workload from another's; cores are the CPUs its
	// perfect scaling bends at (sweeps).
	run, target, workload string
	isBase                bool
	cores                 int
}

type scalingPoint struct {
	Clients int `json:"clients"`
	TPS     num `json:"tps"`
	// TPSLo and TPSHi bound the median's distribution-free confidence
	// interval (A/B, with enough rounds).
	TPSLo *num `json:"tps_lo,omitempty"`
	TPSHi *num `json:"tps_hi,omitempty"`
	P99Ms num  `json:"p99_ms"`
	P99Lo *num `json:"p99_lo,omitempty"`
	P99Hi *num `json:"p99_hi,omitempty"`
	// Speedup and Efficiency, as the result file has them (sweeps).
	Speedup *num `json:"speedup,omitempty"`
	// Ideal is perfect scaling at the point, bending at the machine's
	// cores (compare's IdealSpeedup; sweeps).
	Ideal *num `json:"ideal,omitempty"`
	// TPSPerCPU is the throughput per CPU-second the system had, which
	// the speedup of a series with PerCPU is of (sweeps).
	TPSPerCPU  *num `json:"tps_per_cpu,omitempty"`
	Efficiency *num `json:"efficiency,omitempty"`
	// Incomplete marks a step cut short (sweeps), or, for an A/B median,
	// the number of rounds left out because their step was cut short.
	Incomplete bool  `json:"incomplete,omitempty"`
	LeftOut    int   `json:"rounds_left_out,omitempty"`
	RoundTPS   []num `json:"round_tps,omitempty"`
	RoundP99   []num `json:"round_p99_ms,omitempty"`
	// Costs are the costs per transaction (costMeasures) the point has:
	// the step's (sweeps), or the central value over the rounds with its
	// interval (A/B).
	Costs []cost `json:"costs,omitempty"`
	// VsBase is, in a panel of several lines, the change of throughput
	// against the panel's baseline line at the same client count.
	VsBase *vsBase `json:"vs_baseline,omitempty"`
}

// cost is one cost per transaction at a point of a scaling line.
type cost struct {
	Measure string `json:"measure"`
	Value   num    `json:"value"`
	Lo      *num   `json:"lo,omitempty"`
	Hi      *num   `json:"hi,omitempty"`
}

// vsBase is a change against the baseline, a fraction (-0.05 is 5 %
// lower), with its interval where a comparison made one, and as the text
// formats write it ("-5.4% ± 0.9%").
type vsBase struct {
	Change num    `json:"change"`
	Lo     *num   `json:"lo,omitempty"`
	Hi     *num   `json:"hi,omitempty"`
	Text   string `json:"text"`
}

// timeline is the per-interval series of one step (clock "step": seconds
// since its measured window began), or of one client count of an A/B run
// (clock "run": seconds since the run's first step began, a series per
// target through every round).
type timeline struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Clock string `json:"clock"`
	// Incomplete holds the reasons of steps cut short; NotRun the planned
	// stretch a cut-short step never measured.
	Incomplete []string   `json:"incomplete,omitempty"`
	NotRun     *span      `json:"not_run,omitempty"`
	Series     []tlSeries `json:"series"`
	Windows    []window   `json:"windows,omitempty"`
	// Rounds mark where each round of an A/B run began (clock "run").
	Rounds []mark `json:"rounds,omitempty"`
	Failed int64  `json:"failed"`
	// Gaps counts breaks in the series: intervals missing between two
	// measured ones of a step (a reconnect, a stall of the collector);
	// GapSpans says where they are. A line also breaks between two
	// steps (an A/B run's rounds), which is no gap.
	Gaps     int    `json:"gaps"`
	GapSpans []span `json:"gap_spans,omitempty"`
}

type span struct {
	From num `json:"from_s"`
	To   num `json:"to_s"`
}

type tlSeries struct {
	Label string `json:"label"`
	// Segments are runs of contiguous intervals.
	Segments [][]tlPoint `json:"segments"`
}

type tlPoint struct {
	T      num   `json:"t"`
	Len    num   `json:"len_s"`
	TPS    num   `json:"tps"`
	MeanMs num   `json:"mean_ms"`
	P99Ms  num   `json:"p99_ms"`
	Failed int64 `json:"failed,omitempty"`
}

// mark is a labelled moment on a timeline's clock.
type mark struct {
	At    num    `json:"at_s"`
	Label string `json:"label"`
}

// window is a disturbance window on a timeline's clock.
type window struct {
	Name   string `json:"name"`
	Spec   string `json:"spec"`
	From   num    `json:"from_s"`
	To     num    `json:"to_s"`
	Target string `json:"target,omitempty"`
}

// evidence is one file's steps with the evidence behind their verdicts.
type evidence struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	File  string `json:"file"`
	// Paragraph is diagnose.Sweep's paragraph (sweeps only: an A/B file's
	// steps repeat their client counts round after round).
	Paragraph string         `json:"paragraph,omitempty"`
	HasProbes bool           `json:"has_probes"`
	HasCPU    bool           `json:"has_cpu"`
	HasWaits  bool           `json:"has_waits"`
	Steps     []stepEvidence `json:"steps"`
	// Unnamed says, once for the file, which objects' functions its
	// profiles could not name and what would name them.
	Unnamed []string `json:"unnamed,omitempty"`
}

// stepEvidence is one step under its file's evidence: its facts and the
// figures diagnose computed, each probe's part (evidence.go), and notes.
// In the page's JSON the probes' data comes between the two (MarshalJSON).
type stepEvidence struct {
	stepFacts
	// Parts are the probes' parts, in the order of evidenceViews.
	Parts []evidencePart
	stepNotes
}

// stepFacts are what the step did, its verdict and the figures drawn
// across steps (CPU and wait-class bars) or from several probes.
type stepFacts struct {
	ID         string      `json:"id"`
	Clients    int         `json:"clients"`
	Round      int         `json:"round,omitempty"`
	Complete   bool        `json:"complete"`
	Reason     string      `json:"incomplete_reason,omitempty"`
	Knee       bool        `json:"knee,omitempty"`
	Peak       bool        `json:"peak,omitempty"`
	Summary    stepSummary `json:"summary"`
	Verdict    string      `json:"verdict"`
	Detail     string      `json:"detail,omitempty"`
	Evidence   []string    `json:"evidence,omitempty"`
	CPU        *cpuShares  `json:"cpu,omitempty"`
	Waits      []share     `json:"wait_classes,omitempty"`
	WaitSource string      `json:"wait_source,omitempty"`
	TopEvents  []share     `json:"top_events,omitempty"`
	PerTxn     *perTxn     `json:"per_txn,omitempty"`
}

// stepNotes are the step's errors and disturbances, the probes that could
// not run and where the server's processes were found.
type stepNotes struct {
	Errors       []result.Error       `json:"errors,omitempty"`
	Disturbances []result.Disturbance `json:"disturbances,omitempty"`
	Outages      []string             `json:"outages,omitempty"` // the server lost or restarted during the step (diagnose.OutageLine)
	Unavailable  []keyVal             `json:"unavailable,omitempty"`
	ServerNote   string               `json:"server_note,omitempty"`
}

// MarshalJSON writes the step's facts, then each probe's data under the
// probe's name, then its notes, as one object.
func (se stepEvidence) MarshalJSON() ([]byte, error) {
	facts, err := json.Marshal(se.stepFacts)
	if err != nil {
		return nil, err
	}
	b := bytes.NewBuffer(facts[:len(facts)-1]) // open: without its "}"
	for _, p := range se.Parts {
		if p.data == nil {
			continue
		}
		v, err := json.Marshal(p.data)
		if err != nil {
			return nil, err
		}
		k, _ := json.Marshal(p.view.probe.Name)
		b.WriteByte(',')
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	notes, err := json.Marshal(se.stepNotes)
	if err != nil {
		return nil, err
	}
	if len(notes) > 2 { // not {}
		b.WriteByte(',')
		b.Write(notes[1:])
	} else {
		b.WriteByte('}')
	}
	return b.Bytes(), nil
}

type stepSummary struct {
	Transactions int64 `json:"transactions"`
	ElapsedS     num   `json:"elapsed_s"`
	TPS          num   `json:"tps"`
	MeanMs       num   `json:"lat_mean_ms"`
	P50Ms        num   `json:"p50_ms"`
	P99Ms        num   `json:"p99_ms"`
	MaxMs        num   `json:"max_ms"`
	Failed       int64 `json:"failed"`
	Retried      int64 `json:"retried,omitempty"`
}

// cpuShares is where the machine's CPU went, as shares of all its cores
// (diagnose.Figures). Server is nil when the server's processes are not on
// this host; Pooler when no pooler was accounted.
type cpuShares struct {
	Server    *num `json:"server,omitempty"`
	Generator num  `json:"load_generator"`
	Pooler    *num `json:"pooler,omitempty"`
	Probes    num  `json:"probes"`
	Other     num  `json:"other"`
	Idle      num  `json:"idle"`
	RunQueue  num  `json:"run_queue_per_core"`
}

type share struct {
	Name  string `json:"name"`
	Share num    `json:"share"`
}

// perTxn is what one transaction cost (diagnose.Figures); a figure whose
// evidence is missing is nil.
type perTxn struct {
	ServerCPUUS    *num `json:"server_cpu_us,omitempty"`
	GeneratorCPUUS *num `json:"load_generator_cpu_us,omitempty"`
	PoolerCPUUS    *num `json:"pooler_cpu_us,omitempty"`
	CtxSwitches    *num `json:"context_switches,omitempty"`
	ServerMs       *num `json:"server_ms,omitempty"`
	PoolWaitMs     *num `json:"pool_wait_ms,omitempty"` // waited in the pooler for a server connection
	NetworkMs      *num `json:"network_client_ms,omitempty"`
	LatencyMs      num  `json:"latency_ms"`
}

// change is a relative change with its interval, as the file has it.
type change struct {
	Change     num  `json:"change"`
	Lo         *num `json:"lo,omitempty"`
	Hi         *num `json:"hi,omitempty"`
	Confidence num  `json:"confidence"`
}

// profile is one of the analysis' flame graphs (flame.Profile) as the
// page names it: its anchor and label, its (first) pprof file, and other
// graphs by their labels.
type profile struct {
	flame.Profile
	ID    string `json:"id"`
	Label string `json:"label"`
	First string `json:"file"`
	// SharedBy names the other steps that name the same pprof file
	// (SharedWith); DrawnAt the step whose graph of the same file is
	// drawn (SameAs).
	SharedBy []string `json:"shared_with,omitempty"`
	DrawnAt  string   `json:"same_as,omitempty"`
}

// num is a float shown with six significant digits; NaN and infinities
// are JSON null.
type num float64

// MarshalJSON implements json.Marshaler.
func (n num) MarshalJSON() ([]byte, error) {
	x := float64(n)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	return []byte(strconv.FormatFloat(r, 'f', -1, 64)), nil
}

func numPtr(x float64) *num {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	n := num(x)
	return &n
}

var _ json.Marshaler = num(0)
