package html

import "testing"

// TestEvidenceViews: every probe's view is registered once, and either
// draws a part under each step or says where else the page shows the
// probe's evidence.
func TestEvidenceViews(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range evidenceViews {
		if v.probe.Name == "" || seen[v.probe.Name] {
			t.Errorf("view %q: unnamed or registered twice", v.probe)
		}
		seen[v.probe.Name] = true
		switch {
		case v.tmpl == nil && v.elsewhere == "":
			t.Errorf("%s: no template and no word of where else its evidence is shown", v.probe)
		case v.tmpl == nil && v.data != nil:
			t.Errorf("%s: data that no template draws", v.probe)
		case v.tmpl != nil && v.elsewhere != "":
			t.Errorf("%s: a template, and a note that it is drawn elsewhere", v.probe)
		}
	}
}
