package html

import (
	"strings"
	"testing"
)

// TestScriptsCompact: the page's own scripts hold nothing compact would
// change the meaning of (a template literal, a block comment), and
// compact drops comment lines, blank lines and indentation only.
func TestScriptsCompact(t *testing.T) {
	for name, src := range map[string]string{"charts.js": chartsJS, "flame.js": flameJS, "sort.js": sortJS} {
		for _, bad := range []string{"`", "/*", "*/"} {
			if strings.Contains(src, bad) {
				t.Errorf("%s holds %q: compact would change it", name, bad)
			}
		}
		if len(compact(src)) >= len(src) {
			t.Errorf("%s: compact saved nothing", name)
		}
	}
	in := "// a script\n(function () {\n  var s = \"  // not a comment\"; // its own line stays\n\n  // gone\n\tf(s);\n})();\n"
	want := "(function () {\nvar s = \"  // not a comment\"; // its own line stays\nf(s);\n})();\n"
	if got := compact(in); got != want {
		t.Errorf("compact(%q) = %q, want %q", in, got, want)
	}
}
