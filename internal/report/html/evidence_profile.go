package html

func init() { registerView(profileView, 60) }

// profileView has no part under a step: the Profiles section draws each
// step's profile as a flame graph (flame.go).
var profileView = evidenceView{probe: "profile",
	elsewhere: "the Profiles section: a flame graph of each step's profile (flame.go)"}
