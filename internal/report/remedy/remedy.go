// Package remedy words the remedies the analysis names (diagnose.Remedy)
// as the user gives them, pgscale's options: no package below the
// command line names a flag (issue 45). The renderers word them, and the
// command line hands Say to the analysis for the sentences it makes.
package remedy

import "github.com/pgscale/pgscale/internal/diagnose"

// Say words r as the user gives it, a phrase for a sentence of the
// analysis: "--reshuffle".
func Say(r diagnose.Remedy) string {
	switch r {
	case diagnose.CountInstructions:
		return "--count instructions"
	case diagnose.ReshuffleEveryRound:
		return "--reshuffle 1, the default with --count,"
	case diagnose.Reshuffle:
		return "--reshuffle"
	case diagnose.SeparateData:
		return "--separate-data"
	case diagnose.WholeRounds:
		return "--slice 0"
	case diagnose.SourceBuild:
		return "a src: target, --pg-src"
	}
	return ""
}

// Unnamed says why u's functions have no name and what would name them,
// its remedy too: "... names them, as does a server built from source (a
// src: target, --pg-src)".
func Unnamed(u diagnose.UnnamedCode) string {
	if u.Also == diagnose.SourceBuild {
		return u.Reason + ", as does a server built from source (" + Say(u.Also) + ")"
	}
	return u.Reason
}
