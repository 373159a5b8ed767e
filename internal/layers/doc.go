// Package layers holds no code: its test checks that pgscale's import graph
// follows the data flow of DESIGN.md, so a boundary that erodes fails a test.
package layers
