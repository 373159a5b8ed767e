package report_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgscale/pgscale/internal/compare"
	"github.com/pgscale/pgscale/internal/report"
	"github.com/pgscale/pgscale/internal/result"
)

// A decision rule's (--expect) result is in every format a sweep's file
// is written in: the text and markdown rules section, the HTML page's
// Rules section, each rule marked as holding or not, benchfmt's comment
// lines and a BMF benchmark of its own.
func TestRulesInEveryFormat(t *testing.T) {
	f, err := result.Read(filepath.Join("testdata", "pooled.json"))
	if err != nil {
		t.Fatal(err)
	}
	f.Expect = []string{"efficiency@c=8>=50%", "server-cpu/txn@c=8<c=1+20%"}
	d := &report.Doc{Analysis: compare.Analyze([]compare.Input{{Name: "pooled.json", File: f}}, compare.Compared{})}
	outcomes := compare.Check(f, []compare.Expectation{mustExpect(t, f.Expect[0]), mustExpect(t, f.Expect[1])})
	if len(outcomes) != 2 {
		t.Fatalf("outcomes %+v", outcomes)
	}
	for _, format := range []string{"text", "markdown", "html", "benchfmt"} {
		out := string(write(t, format, d))
		for _, o := range outcomes {
			o.Target = ""
			want := o.String()
			if format == "html" {
				want = strings.NewReplacer("<", "&lt;", ">", "&gt;", "+", "&#43;").Replace(want)
			}
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks the rule's result %q", format, want)
			}
		}
	}
	page := string(write(t, "html", d))
	if !strings.Contains(page, `<section id="rules"`) || !strings.Contains(page, `<a href="#rules">Rules</a>`) {
		t.Errorf("the HTML page has no Rules section")
	}
	bmf := string(write(t, "bmf", d))
	for _, o := range outcomes {
		v := `{"value":0}`
		if o.Holds {
			v = `{"value":1}`
		}
		if !strings.Contains(strings.Join(strings.Fields(bmf), ""), `"`+o.Spec+`":`+v) {
			t.Errorf("BMF lacks rule %s as %s:\n%s", o.Spec, v, bmf)
		}
	}
	for _, o := range outcomes {
		class := `<li class="bad">`
		if o.Holds {
			class = `<li class="good">`
		}
		if !strings.Contains(page, class) {
			t.Errorf("no %s for a rule that holds=%v", class, o.Holds)
		}
	}
}

func mustExpect(t *testing.T, spec string) compare.Expectation {
	t.Helper()
	e, err := compare.ParseExpectation(spec)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
