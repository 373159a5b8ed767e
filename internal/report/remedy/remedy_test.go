package remedy_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/diagnose"
	"github.com/pgscale/pgscale/internal/report/remedy"
)

// Every remedy the analysis names has words, an option of pgscale's.
func TestSayEvery(t *testing.T) {
	for r := diagnose.CountInstructions; r <= diagnose.SourceBuild; r++ {
		if w := remedy.Say(r); !strings.Contains(w, "--") {
			t.Errorf("remedy %d: words %q name no option", r, w)
		}
	}
	if w := remedy.Say(0); w != "" {
		t.Errorf("no remedy: words %q", w)
	}
}

// An unnamed object's reason is followed by the remedy that names its
// functions too, when there is one.
func TestUnnamed(t *testing.T) {
	u := diagnose.UnnamedCode{Object: "postgres", Reason: "postgresql-15-dbgsym names them"}
	if got := remedy.Unnamed(u); got != u.Reason {
		t.Errorf("no remedy: %q", got)
	}
	u.Also = diagnose.SourceBuild
	if got, want := remedy.Unnamed(u), "postgresql-15-dbgsym names them, as does a server built from source (a src: target, --pg-src)"; got != want {
		t.Errorf("a source build: %q, want %q", got, want)
	}
}
