package html

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strings"
)

// svgElements and svgAttrs are what a chart may hold. gonum's SVG back end
// escapes the text it is given; sanitizeSVG does not rely on that: it
// parses the SVG, refuses anything outside these lists, and writes it out
// again with every text and attribute value escaped by encoding/xml, so
// nothing from a result file can become markup in the page.
var (
	svgElements = map[string]bool{"svg": true, "g": true, "path": true, "text": true, "rect": true,
		"circle": true, "line": true, "polyline": true, "polygon": true, "title": true}
	svgAttrs = map[string]bool{"d": true, "style": true, "transform": true, "x": true, "y": true,
		"width": true, "height": true, "viewBox": true, "fill": true, "stroke": true, "stroke-width": true,
		"points": true, "cx": true, "cy": true, "r": true, "x1": true, "y1": true, "x2": true, "y2": true,
		"font-family": true, "font-size": true, "text-anchor": true}
)

// sanitizeSVG rewrites an SVG document from the allowlists as an inline
// <svg> element with the given id and accessible label, sized by the page.
func sanitizeSVG(raw []byte, id, label string) (template.HTML, error) {
	dec := xml.NewDecoder(bytes.NewReader(raw))
	var out strings.Builder
	depth := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", id, err)
		}
		switch t := tok.(type) {
		case xml.ProcInst, xml.Comment:
			// The XML declaration and gonum's comment: not needed inline.
		case xml.Directive:
			return "", fmt.Errorf("chart %s: SVG holds a directive", id)
		case xml.StartElement:
			name := t.Name.Local
			if !svgElements[name] || (t.Name.Space != "" && t.Name.Space != svgNS) {
				return "", fmt.Errorf("chart %s: SVG element <%s> is not allowed", id, name)
			}
			if (name == "svg") != (depth == 0) {
				return "", fmt.Errorf("chart %s: <%s> at depth %d", id, name, depth)
			}
			depth++
			out.WriteString("<" + name)
			if name == "svg" {
				fmt.Fprintf(&out, ` xmlns="%s" id="%s" role="img" aria-label="%s"`, svgNS, attrEscape(id), attrEscape(label))
			}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || a.Name.Local == "xmlns" {
					continue
				}
				if name == "svg" && (a.Name.Local == "width" || a.Name.Local == "height") {
					continue // the page sizes the chart; the viewBox keeps its shape
				}
				if a.Name.Space != "" || !svgAttrs[a.Name.Local] {
					return "", fmt.Errorf("chart %s: SVG attribute %s on <%s> is not allowed", id, a.Name.Local, name)
				}
				v := strings.ToLower(a.Value)
				if strings.Contains(v, "url(") || strings.Contains(v, "javascript:") || strings.Contains(v, "expression(") {
					return "", fmt.Errorf("chart %s: SVG attribute %s holds a reference", id, a.Name.Local)
				}
				fmt.Fprintf(&out, ` %s="%s"`, a.Name.Local, attrEscape(a.Value))
			}
			out.WriteString(">")
		case xml.EndElement:
			depth--
			out.WriteString("</" + t.Name.Local + ">")
		case xml.CharData:
			if depth == 0 {
				continue
			}
			if len(bytes.TrimSpace(t)) == 0 {
				out.WriteByte('\n') // between elements: a plain line break
				continue
			}
			var b bytes.Buffer
			if err := xml.EscapeText(&b, t); err != nil {
				return "", err
			}
			out.Write(b.Bytes())
		}
	}
	if depth != 0 {
		return "", fmt.Errorf("chart %s: SVG ends inside an element", id)
	}
	// The output is built only of allowlisted names and escaped text.
	return template.HTML(out.String()), nil
}

const svgNS = "http://www.w3.org/2000/svg"

func attrEscape(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s)) // writes to a buffer: never fails
	return b.String()
}
