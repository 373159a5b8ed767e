package result

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// BisectSchema names the bisect log's format; a change to it that old
// readers would misread gets a new name.
const BisectSchema = "pgscale-bisect/1"

// BisectFile is the bisect log's name in a bisect's directory.
const BisectFile = "bisect.json"

// Bisect is what pgscale bisect did and found, written after every step
// (so that --resume continues from it): the commits between the good and
// the bad end, every step with its commit, its measures and how it was
// classified, and the commits that carry the change.
type Bisect struct {
	Schema  string `json:"schema"`
	Version string `json:"pgscale_version"`
	// Argv is the command line as given (passwords redacted): --resume
	// runs it again.
	Argv     []string  `json:"argv"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Complete says the bisect ran to its end (Outcome says what it
	// found); Reason says why it did not.
	Complete bool   `json:"complete"`
	Reason   string `json:"reason,omitempty"`
	// Target is the target spec as given; Source the path of the source
	// it builds at each commit, and What which of its sources that is
	// ("the server", "the extension", "the proxy's build"; its path is Source).
	Target string `json:"target"`
	Source string `json:"source"`
	What   string `json:"what"`
	// Good and Bad are the ends as given (revisions), resolved in
	// Commits' first and last entries.
	Good string `json:"good"`
	Bad  string `json:"bad"`
	// Workload names what ran, as the result files do.
	Workload string `json:"workload"`
	// Measure is the measure judged, at Step ("c=1"), in Unit; Lower says
	// lower is better; Counted that it is counted under Valgrind.
	Measure string `json:"measure"`
	Step    string `json:"step"`
	Unit    string `json:"unit"`
	Lower   bool   `json:"lower_is_better"`
	Counted bool   `json:"counted,omitempty"`
	// MinChange is the smallest change of interest (a fraction): the ends
	// must differ by more, and a commit that moves the measure by less
	// carries none of the change.
	MinChange  float64 `json:"min_change"`
	Confidence float64 `json:"confidence"`
	// RoundsMax is the most rounds a step may take to classify its
	// commit.
	RoundsMax int `json:"rounds_max"`
	// Commits are the good end, then every commit after it up to the bad
	// end, in order (git rev-list --first-parent).
	Commits []BisectCommit `json:"commits"`
	// Steps are the steps in the order run: the ends first.
	Steps []BisectStep `json:"steps"`
	// Change is the change from the good end to the bad one, as the ends'
	// step measured it.
	Change *BisectChange `json:"change,omitempty"`
	// Outcome is BisectFound, BisectSplit, BisectNoChange,
	// BisectUndecided or BisectUndetermined, once Complete.
	Outcome string `json:"outcome,omitempty"`
	// Culprits are the commits that carry the change, in commit order:
	// one, or each part of a change split over several.
	Culprits []BisectCulprit `json:"culprits,omitempty"`
	// Unresolved are ranges of commits that hold a change that could not
	// be placed on one commit: their commits between do not build or
	// could not be classified, or the change is spread over them in
	// parts below the smallest change of interest.
	Unresolved []BisectRange `json:"unresolved,omitempty"`
}

// Outcomes of a bisect.
const (
	// BisectFound: one commit carries the change.
	BisectFound = "found"
	// BisectSplit: the change is split over several commits, each
	// carrying part of it.
	BisectSplit = "split"
	// BisectNoChange: the ends do not differ by more than the smallest
	// change of interest; nothing to bisect.
	BisectNoChange = "no change"
	// BisectUndecided: the ends could not be told apart from noise in the
	// rounds allowed.
	BisectUndecided = "undecided"
	// BisectUndetermined: the change lies in a range whose commits could
	// not all be built or classified.
	BisectUndetermined = "undetermined"
)

// BisectCommit is one commit of the range.
type BisectCommit struct {
	Hash    string `json:"hash"`
	Subject string `json:"subject"`
	// Status is what the bisect learnt of it: BisectGood, BisectBad,
	// BisectPart, BisectSkipped, BisectUnbuildable, or "" when it was
	// not measured.
	Status string `json:"status,omitempty"`
	// Value is the measure's geometric mean over the rounds of the last
	// step that measured the commit (NaN-free: absent when unmeasured).
	Value *float64 `json:"value,omitempty"`
}

// Short is the commit's abbreviated hash.
func (c BisectCommit) Short() string {
	if len(c.Hash) > 7 {
		return c.Hash[:7]
	}
	return c.Hash
}

// A commit's status, and a step's classification of its commit.
const (
	// BisectGood: like the good end of its interval (the change comes
	// after it).
	BisectGood = "good"
	// BisectBad: like the bad end of its interval (it carries the change,
	// or comes after the commit that does).
	BisectBad = "bad"
	// BisectPart: unlike either end: the change is split, part before it,
	// part after.
	BisectPart = "part"
	// BisectNeither: within the smallest change of interest of both ends
	// (the interval's change is spread in parts too small to place).
	BisectNeither = "neither"
	// BisectSkipped: not classified within the rounds allowed, or
	// interrupted; another commit near it is measured instead.
	BisectSkipped = "skipped"
	// BisectUnbuildable: its build failed; skipped.
	BisectUnbuildable = "does not build"
)

// BisectStep is one step: the ends, or one commit measured against the
// two ends of the interval that holds the change.
type BisectStep struct {
	N int `json:"n"`
	// Commit is the commit classified (the bad end for the ends' step);
	// Lo and Hi the ends of its interval it was measured against (for
	// the ends' step Lo is the good end and Hi empty).
	Commit string `json:"commit"`
	Lo     string `json:"lo"`
	Hi     string `json:"hi,omitempty"`
	// Left is how many commits the interval held before the step, and
	// StepsLeft how many steps, log₂ of that, were thought to remain.
	Left      int `json:"left"`
	StepsLeft int `json:"steps_left"`
	// Dir holds the step's A/B result files, relative to the log.
	Dir string `json:"dir,omitempty"`
	// Build is how the commit's build was had.
	Build *BisectBuild `json:"build,omitempty"`
	// BuildS and MeasureS are how long building and measuring took.
	BuildS   float64 `json:"build_s"`
	MeasureS float64 `json:"measure_s"`
	Rounds   int     `json:"rounds"`
	Stopped  string  `json:"stopped,omitempty"`
	// Class is how the commit was classified (BisectGood, BisectBad,
	// BisectPart, BisectNeither, BisectSkipped, BisectUnbuildable), empty
	// for the ends' step; Why says it in words.
	Class string `json:"class,omitempty"`
	Why   string `json:"why,omitempty"`
	// Values are the measure's geometric mean over the rounds, by commit.
	Values map[string]float64 `json:"values,omitempty"`
	// FromLo is the change from Lo to Commit, ToHi from Commit to Hi
	// (the ends' step: FromLo is good to bad).
	FromLo *BisectChange `json:"from_lo,omitempty"`
	ToHi   *BisectChange `json:"to_hi,omitempty"`
	// Complete says the step ran to its classification.
	Complete bool `json:"complete"`
	// Data says, for a counted step, what its commits ran on:
	// BisectDataCopies (byte-identical copies of Lo's data, made anew in
	// each of Layouts cluster layouts: a difference is their code's) or
	// BisectDataOwn (each commit made its own: with one layout a change
	// includes what each one's data built differently, which the interval
	// does not cover); DataWhy says why not copies. Empty otherwise, and
	// in logs written before pgscale copied data.
	Data    string `json:"data,omitempty"`
	DataWhy string `json:"data_why,omitempty"`
	Layouts int    `json:"layouts,omitempty"`
}

// What a counted step's commits ran on (BisectStep.Data).
const (
	BisectDataCopies = "copies"
	BisectDataOwn    = "own"
)

// DataUncovered reports whether the step's changes may be its data's: its
// commits, counted, each made data of its own and ran on one cluster
// layout, so the interval leaves out what their data built differently.
func (s BisectStep) DataUncovered() bool { return s.Data == BisectDataOwn && s.Layouts == 1 }

// BisectBuild says how one commit's build was had.
type BisectBuild struct {
	Key    string `json:"key,omitempty"`
	Cached bool   `json:"cached"`
	// Phases are the build's phases with their seconds, when it was made
	// now.
	Phases []BisectPhase `json:"phases,omitempty"`
	// Failed says, for a build that failed, in which phase and where its
	// log is.
	Failed string `json:"failed,omitempty"`
}

// BisectPhase is one phase of a build and how long it took.
type BisectPhase struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// BisectChange is the measure's change from one commit to another, as a
// step measured it, with its interval and outcome against the smallest
// change of interest the step judged it by.
type BisectChange struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Change is To/From − 1 (geometric mean of the per-round ratios), Lo
	// and Hi its interval at the step's confidence.
	Change float64 `json:"change"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	// Tolerance is the change the step judged it against (in the
	// direction of the change it looked for) and Outcome the verdict's
	// outcome against it: "pass" (no change of interest), "fail" (a
	// change past it), "inconclusive".
	Tolerance float64 `json:"tolerance"`
	Outcome   string  `json:"outcome"`
	Rounds    int     `json:"rounds"`
	// Why explains the change from what both sides recorded: for counted
	// runs the functions whose instructions moved.
	Why       []string         `json:"why,omitempty"`
	Functions []BisectFunction `json:"functions,omitempty"`
}

// BisectFunction is one function whose count moved with a change: per
// transaction on each side, and its share of the change.
type BisectFunction struct {
	Function string  `json:"function"`
	Base     float64 `json:"base"`
	Cand     float64 `json:"cand"`
	Delta    float64 `json:"delta"`
	Share    float64 `json:"share"`
	// Inside marks the function that holds the change with what it
	// calls (where it is inlined), not in its own code alone.
	Inside bool `json:"inside,omitempty"`
}

// BisectCulprit is a commit that carries the change, or part of it.
type BisectCulprit struct {
	Commit BisectCommit `json:"commit"`
	Parent string       `json:"parent"`
	Change BisectChange `json:"change"`
	// Share is its change as a part of the ends' change.
	Share float64 `json:"share"`
	// DiffStat is git diff --stat of the commit against its parent.
	DiffStat string `json:"diff_stat"`
}

// BisectRange is a range of commits, First to Last, that holds a change
// no commit of it was found to carry alone, and why.
type BisectRange struct {
	After string `json:"after"`
	First string `json:"first"`
	Last  string `json:"last"`
	Why   string `json:"why"`
}

// WriteBisect writes the log atomically (a reader never sees half of
// it).
func WriteBisect(path string, b *Bisect) error {
	b.Schema = BisectSchema
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(data, '\n'))
}

// ReadBisect reads a bisect log.
func ReadBisect(path string) (*Bisect, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var b Bisect
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%s: not a bisect log: %v", path, err)
	}
	if b.Schema != BisectSchema {
		return nil, fmt.Errorf("%s: schema is %q, want %q (a bisect log of this pgscale)", path, b.Schema, BisectSchema)
	}
	return &b, nil
}

// CommitIndex returns the index of the commit with hash h in Commits, or
// -1.
func (b *Bisect) CommitIndex(h string) int {
	for i, c := range b.Commits {
		if c.Hash == h {
			return i
		}
	}
	return -1
}
