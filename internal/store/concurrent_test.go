package store_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pgscale/pgscale/internal/store"
	"github.com/pgscale/pgscale/internal/testenv"
)

// writerEnv, set to a store location, makes the test binary a writer
// process for TestConcurrentWriters; writerIDEnv numbers it.
const (
	writerEnv   = "PGSCALE_STORE_TEST_WRITER"
	writerIDEnv = "PGSCALE_STORE_TEST_WRITER_ID"
	startEnv    = "PGSCALE_STORE_TEST_START" // Unix nanoseconds when both writers begin
	perWriter   = 30
)

// TestConcurrentWriters starts two processes that add results to one store
// at once, each from two goroutines, as two CI jobs would: files of their
// own to the same series, and one file both add. Every result and point
// must arrive, and the shared file once.
func TestConcurrentWriters(t *testing.T) {
	testenv.Slow(t)
	forEachBackend(t, func(t *testing.T, location string) {
		open(t, location).Close() // created first, so the writers race on adding only
		var wg sync.WaitGroup
		start := strconv.FormatInt(time.Now().Add(time.Second).UnixNano(), 10)
		outs := make([][]byte, 2)
		errs := make([]error, 2)
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1")
				cmd.Env = append(os.Environ(), writerEnv+"="+location, writerIDEnv+"="+strconv.Itoa(w), startEnv+"="+start)
				outs[w], errs[w] = cmd.CombinedOutput()
			}()
		}
		wg.Wait()
		for w := range 2 {
			if errs[w] != nil {
				t.Fatalf("writer %d: %v\n%s", w, errs[w], outs[w])
			}
		}
		s := open(t, location)
		if n := rows(t, s, "pgscale_results"); n != 2*perWriter+1 {
			t.Errorf("%d results stored, want %d", n, 2*perWriter+1)
		}
		series, err := s.Series(context.Background(), store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(series) != 4 {
			t.Fatalf("series %v, want one per measure", series)
		}
		for _, sr := range series {
			if sr.Count != 2*perWriter+1 {
				t.Errorf("%s: %d points, want %d", sr.Key, sr.Count, 2*perWriter+1)
			}
		}
	})
}

// TestWriterProcess is one writer of TestConcurrentWriters; it does
// nothing in a normal test run.
func TestWriterProcess(t *testing.T) {
	location := os.Getenv(writerEnv)
	if location == "" {
		t.Skip("only run as a writer process of TestConcurrentWriters")
	}
	w, _ := strconv.Atoi(os.Getenv(writerIDEnv))
	s, err := store.Open(context.Background(), location, testMeasures()...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ns, err := strconv.ParseInt(os.Getenv(startEnv), 10, 64); err == nil {
		time.Sleep(time.Until(time.Unix(0, ns)))
	}
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if g == 0 {
				f, raw := variant(t, -time.Hour, 999) // the file both writers add
				if _, err := s.Add(context.Background(), f, raw, store.Meta{Label: "shared"}); err != nil {
					t.Error(err)
				}
			}
			for i := g; i < perWriter; i += 2 {
				f, raw := variant(t, time.Duration(i)*time.Minute, 1000+float64(w*1000+i))
				if _, err := s.Add(context.Background(), f, raw, store.Meta{Label: "shared", Commit: fmt.Sprint(w, "-", i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
