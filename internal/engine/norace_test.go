//go:build !race

package engine_test

// raceEnabled says the tests run under the race detector, whose shadow
// memory multiplies the heap.
const raceEnabled = false
