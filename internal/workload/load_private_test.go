package workload

import "testing"

func TestSplitWeight(t *testing.T) {
	for _, tc := range []struct {
		in   string
		name string
		w    int
		ok   bool
	}{{"a.sql", "a.sql", 1, true}, {"a.sql@3", "a.sql", 3, true}, {"se@0", "se", 0, true}, {"a@b.sql@2", "a@b.sql", 2, true}, {"a.sql@x", "", 0, false}, {"a.sql@-1", "", 0, false}} {
		name, w, err := splitWeight(tc.in)
		if (err == nil) != tc.ok || name != tc.name || w != tc.w {
			t.Errorf("splitWeight(%q) = %q, %d, %v", tc.in, name, w, err)
		}
	}
}

func TestResolveSeed(t *testing.T) {
	if n, err := ResolveSeed("42"); err != nil || n != 42 {
		t.Errorf("ResolveSeed(42) = %d, %v", n, err)
	}
	if n, err := ResolveSeed("-1"); err != nil || n != ^uint64(0) {
		t.Errorf("ResolveSeed(-1) = %d, %v", n, err)
	}
	a, _ := ResolveSeed("rand")
	b, _ := ResolveSeed("rand")
	if a == b {
		t.Error("two rand seeds are equal")
	}
	if _, err := ResolveSeed("sometimes"); err == nil {
		t.Error("ResolveSeed(sometimes) accepted")
	}
}
