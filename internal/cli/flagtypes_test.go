package cli

import (
	"testing"
	"time"
)

func TestParseSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{"10": 10 * time.Second, "0.5": 500 * time.Millisecond, "1m30s": 90 * time.Second, "250ms": 250 * time.Millisecond} {
		if got, err := parseSeconds(in); err != nil || got != want {
			t.Errorf("parseSeconds(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ten", "-1", "-5s"} {
		if _, err := parseSeconds(in); err == nil {
			t.Errorf("parseSeconds(%q) accepted", in)
		}
	}
}

func TestMillis(t *testing.T) {
	var d time.Duration
	m := millis{&d}
	if err := m.Set("5"); err != nil || d != 5*time.Millisecond {
		t.Errorf("-L 5 = %v, %v", d, err)
	}
	if err := m.Set("2s"); err != nil || d != 2*time.Second {
		t.Errorf("-L 2s = %v, %v", d, err)
	}
	if err := m.Set("-3"); err == nil {
		t.Error("-L -3 accepted")
	}
}

func TestIntList(t *testing.T) {
	var v []int
	l := intList{&v}
	if err := l.Set("1, 2,4,8"); err != nil || len(v) != 4 || v[3] != 8 || l.String() != "1,2,4,8" {
		t.Errorf("Set(1, 2,4,8) = %v, %v", v, err)
	}
	for _, in := range []string{"0", "1,,2", "a", "-2"} {
		if err := l.Set(in); err == nil {
			t.Errorf("Set(%q) accepted", in)
		}
	}
}
