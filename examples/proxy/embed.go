// Package proxy holds the example proxy definitions beside it (*.yaml),
// embedded in pgscale so that proxy:examples/proxy/NAME.yaml, as the docs
// and the pooler-ci preset write it, reads wherever pgscale runs: a file
// at that path under the working directory is read first.
package proxy

import (
	"embed"
	"path"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Dir is the examples' path as the docs write it.
const Dir = "examples/proxy"

// Read returns the example definition that name (examples/proxy/NAME.yaml,
// or ./examples/proxy/NAME.yaml) stands for; false for any other name.
func Read(name string) ([]byte, bool) {
	name = path.Clean(strings.TrimPrefix(name, "./"))
	dir, file := path.Split(name)
	if strings.TrimSuffix(dir, "/") != Dir || !strings.HasSuffix(file, ".yaml") {
		return nil, false
	}
	b, err := files.ReadFile(file)
	return b, err == nil
}
