package syncio_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/pgscale/pgscale/internal/syncio"
)

// Writers on several goroutines, a reader beside them: every write arrives
// whole, and Reset empties the buffer (go test -race checks the locking).
func TestWritesArriveWhole(t *testing.T) {
	var b syncio.Buffer
	w := syncio.NewWriter(&b)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				w.Write([]byte("one line\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got, want := b.String(), strings.Repeat("one line\n", 800); got != want {
		t.Errorf("got %d bytes, want %d of whole lines", len(got), len(want))
	}
	b.Reset()
	if got := b.String(); got != "" {
		t.Errorf("after Reset: %q", got)
	}
}
