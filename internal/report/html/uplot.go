package html

import _ "embed"

// uPlot (MIT, vendored under uplot/ with its licence and a README saying
// how to update it) draws the page's charts on canvases; charts.js feeds
// it from the page's data block. Both are inlined only in a page with a
// chart, the script allowed by its hash.
var (
	//go:embed uplot/uPlot.iife.min.js
	uplotJS string
	//go:embed uplot/uPlot.min.css
	uplotCSS string

	uplotScript = newScript(uplotJS)
)
