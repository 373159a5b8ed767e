package cli

import "testing"

// Errors joined from targets that failed alike print each line once, in
// the order first said.
func TestOnceEach(t *testing.T) {
	in := "a round could not complete: the server crashed\nrefusing to write x\nrefusing to write x\nwrite b.json: refusing\nrefusing to write x"
	want := "a round could not complete: the server crashed\nrefusing to write x\nwrite b.json: refusing"
	if got := onceEach(in); got != want {
		t.Errorf("onceEach:\n%s\nwant\n%s", got, want)
	}
}
