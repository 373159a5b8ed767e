package report

import (
	"io"

	"github.com/pgscale/pgscale/internal/report/html"
)

// writeHTML writes the document's files as one self-contained HTML page
// (internal/report/html).
func writeHTML(w io.Writer, d *Doc) error {
	doc := html.Doc{}
	for _, in := range d.Files {
		doc.Files = append(doc.Files, html.NamedFile{Name: in.Name, File: in.File})
	}
	return html.Write(w, doc)
}
