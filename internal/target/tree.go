package target

import (
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/build"
)

// Source is the source tree the target builds from: src:'s PostgreSQL
// tree, the one ext= extension of settings: or src:, a proxy's build:
// source. A target that builds from none, or from several extensions, is
// an error saying to name the tree as PATH@REV.
func (t Spec) Source() (build.Source, error) {
	spec := string(t.Kind) + ":" + t.Arg.String()
	one := func(exts []build.Extension, what string) (build.Source, error) {
		if len(exts) != 1 {
			return build.Source{}, fmt.Errorf("%s: %d extensions; name the tree to run in as PATH@REV", what, len(exts))
		}
		return exts[0].Source, nil
	}
	switch a := t.Arg.(type) {
	case SrcArg:
		if len(a.Extensions) > 0 {
			return one(a.Extensions, spec)
		}
		return a.Source, nil
	case SettingsArg:
		return one(a.Extensions, spec)
	case ProxyArg:
		if a.Def.Build == nil {
			return build.Source{}, fmt.Errorf("%s: the proxy has no build: whose source to run in; name the tree as PATH@REV", spec)
		}
		return build.ParseSource(a.Def.Build.Source)
	}
	return build.Source{}, fmt.Errorf("%s: a %s target has no source tree; name the tree as PATH@REV", spec, t.Kind)
}

// Tree reads a tree to run a command in (a micro-benchmark's):
// PATH[@REV][+PATCH...], or a target spec without a name whose kind
// builds from a source (src:PATH@REV, settings:,ext=PATH@REV, a proxy
// with build:), whose Source it is.
func Tree(spec string) (build.Source, error) {
	kind, _, ok := strings.Cut(spec, ":")
	if !ok || strings.ContainsAny(kind, "/.~@") {
		return build.ParseSource(spec)
	}
	ts, err := ParseUnnamed(spec)
	if err != nil {
		return build.ParseSource(spec) // a path with a colon
	}
	return ts.Source()
}
