package target

// Words are what the edge calls the run's options, for what the target
// layer says of them — where it looked for the server binaries and how to
// name a directory, a pooler's refusal, a notice of a shared cluster, a
// kind's help — so that the layer itself speaks of no flag (issue 45).
// The edge gives them in ClusterOptions.Words; a message whose word is
// empty leaves the option unnamed.
type Words struct {
	PGBin      string // the server binaries' directory (ClusterOptions.PGBin)
	TCP        string // listening on TCP too (ClusterOptions.TCP)
	Separate   string // a cluster of its own for every settings target (ClusterOptions.Separate)
	BuildCache string // where builds are kept (ClusterOptions.BuildCache)
}

// in is " (word)" for word, or nothing when the edge gave none.
func in(word string) string {
	if word == "" {
		return ""
	}
	return " (" + word + ")"
}
