package prose_test

import (
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/prose"
)

func TestWords(t *testing.T) {
	if got := prose.Count(1, "client") + ", " + prose.Count(4, "client"); got != "1 client, 4 clients" {
		t.Errorf("Count: %q", got)
	}
	for x, want := range map[float64]string{0: "0%", 0.004: "<1%", 0.376: "38%", 1: "100%"} {
		if got := prose.Share(x); got != want {
			t.Errorf("Share(%v) = %q, want %q", x, got, want)
		}
	}
	lines := prose.Wrap("one two three four five six", 9)
	if strings.Join(lines, "|") != "one two|three|four five|six" {
		t.Errorf("Wrap: %q", lines)
	}
}

func TestCommand(t *testing.T) {
	got := prose.Command([]string{"pgscale", "bisect", "settings:,ext=/src/x", "-f", "my file.sql", "--set", "a='b'", ""})
	if want := `pgscale bisect settings:,ext=/src/x -f 'my file.sql' --set 'a='\''b'\''' ''`; got != want {
		t.Errorf("Command: %s, want %s", got, want)
	}
}
