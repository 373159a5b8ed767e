package result_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/result"
)

// A result refused for what it holds is not tried in the rescue
// directories, where it would be refused again with one more line each.
func TestWriteOrRescueRefusedIsNotRescued(t *testing.T) {
	f := &result.File{Complete: false} // incomplete without a reason: invalid
	path := filepath.Join(t.TempDir(), "r.json")
	where, err := result.WriteOrRescue(path, "refused-test.json", f)
	if where != "" || err == nil || strings.Contains(err.Error(), "elsewhere") || strings.Count(err.Error(), "refusing to write") != 1 {
		t.Errorf("written at %q: %v", where, err)
	}
}
