package integration_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// testTimes are the tests' times, as each ends.
var testTimes struct {
	mu sync.Mutex
	of []testTime
}

type testTime struct {
	name    string
	took    time.Duration
	skipped bool
}

// trackTime records how long t takes, for the table printTimes writes.
func trackTime(t *testing.T) {
	start := time.Now()
	t.Cleanup(func() {
		testTimes.mu.Lock()
		testTimes.of = append(testTimes.of, testTime{t.Name(), time.Since(start), t.Skipped()})
		testTimes.mu.Unlock()
	})
}

// printTimes writes the tests' times, slowest first, to stdout (shown by
// go test -v) and to the file $PGSCALE_TEST_TIMES names (.ci/run prints
// it after the tests).
func printTimes() {
	testTimes.mu.Lock()
	ts := slices.Clone(testTimes.of)
	testTimes.mu.Unlock()
	slices.SortFunc(ts, func(a, b testTime) int { return int(b.took - a.took) })
	var b strings.Builder
	var total time.Duration
	for _, t := range ts {
		total += t.took
	}
	fmt.Fprintf(&b, "internal/integration: %d tests, %s\n", len(ts), total.Round(time.Second))
	for _, t := range ts {
		mark := ""
		if t.skipped {
			mark = " (skipped)"
		}
		fmt.Fprintf(&b, "%8.1fs  %s%s\n", t.took.Seconds(), t.name, mark)
	}
	fmt.Print(b.String())
	if path := os.Getenv("PGSCALE_TEST_TIMES"); path != "" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "PGSCALE_TEST_TIMES: %v\n", err)
		}
	}
}
