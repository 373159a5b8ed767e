package target

import (
	"context"
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/usage"
)

// Bin is an ephemeral cluster started from a build's server binaries:
// NAME=bin:DIR.
const Bin Kind = "bin"

var binKind = kind{
	name: Bin, form: "bin:DIR", ephemeral: true, counts: true,
	help: func(Words) string {
		return "an ephemeral cluster from the server binaries in DIR (a build of one's own)"
	},
	parse: func(arg string) (Arg, error) {
		dir := strings.TrimSpace(arg)
		if dir == "" {
			return nil, fmt.Errorf("bin: needs the directory holding the build's initdb and postgres")
		}
		return BinArg{Dir: dir}, nil
	},
}

// BinArg is a bin target's directory of server binaries.
type BinArg struct{ Dir string }

// String returns the directory.
func (a BinArg) String() string { return a.Dir }

func (a BinArg) plan(_ context.Context, spec Spec, o *opening) (starter, error) {
	bin, err := FindBinDir(a.Dir, Words{}) // the directory is the spec's, not --pg-bin's
	if err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	return &clusterStart{spec: spec, bin: bin, opt: o.opt}, nil
}
