package html

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"strings"
)

// pageScript is one script a page may inline, verbatim, with its
// Content-Security-Policy source expression: the policy allows a page's
// own scripts by their hashes and nothing else, so no text a result file
// smuggles in can run.
type pageScript struct {
	Src  template.JS
	Hash string
}

// newScript is src as a page inlines it, with its hash.
func newScript(src string) pageScript {
	h := sha256.Sum256([]byte(src))
	return pageScript{Src: template.JS(src), Hash: "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"}
}

// compact is one of the page's own scripts without what only its reader
// needs: lines that are comments, blank lines and indentation go, and
// nothing else changes, so a line still ends where it ended. The scripts
// hold no template literal or block comment (TestScriptsCompact), the
// only places where that would change their meaning.
func compact(src string) string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// scriptPolicy is the script-src of a page that carries scripts: their
// hashes, "" when it carries none.
func scriptPolicy(ss []pageScript) string {
	hs := make([]string, len(ss))
	for i, s := range ss {
		hs[i] = s.Hash
	}
	return strings.Join(hs, " ")
}
