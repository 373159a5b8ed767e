package target

import (
	"context"
	"fmt"
	"strings"

	"github.com/pgscale/pgscale/internal/build"
	"github.com/pgscale/pgscale/internal/result"
	"github.com/pgscale/pgscale/internal/usage"
)

// Settings is an ephemeral cluster from the default binaries with its own
// server settings: NAME=settings:k=v,... and, with ext=, extensions built
// for that server and installed into a copy of it.
const Settings Kind = "settings"

var settingsKind = kind{
	name: Settings, form: "settings:k=v,...[," + extShort + "]", ephemeral: true, counts: true, builds: true,
	help: func(w Words) string {
		return "an ephemeral cluster from the default server binaries" + in(w.PGBin) + " with those server settings; " +
			"quote a value holding commas: k='a,b'; " + extForm + " (repeatable) builds an extension with that server's PGXS " +
			"(its pg_config and development headers, postgresql-server-dev-NN), make= giving PGXS's make arguments " +
			"(make='OPTFLAGS= PG_CFLAGS=-O1'), run= a build command of its own, and installs it into a copy of the " +
			"server's tree that the cluster runs from, kept in the build cache" + in(w.BuildCache)
	},
	parse: func(arg string) (Arg, error) {
		items, err := splitSettings(arg)
		if err != nil {
			return nil, err
		}
		var a SettingsArg
		for _, it := range items {
			var isExt bool
			if a.Extensions, isExt, err = extItem(it, a.Extensions); err != nil {
				return nil, err
			} else if isExt {
				continue
			}
			st, err := ParseSetting(it)
			if err != nil {
				return nil, err
			}
			a.Settings = append(a.Settings, st)
		}
		return a, nil
	},
}

// SettingsArg is a settings target's server settings, applied after
// pgscale's defaults and the run's --set settings, and the extensions
// built for its server.
type SettingsArg struct {
	Settings []Setting
	// Extensions are built with the installed server's PGXS and installed
	// into a copy of its tree, which the cluster runs from.
	Extensions []build.Extension
}

// String returns the settings as k=v,..., then the extensions.
func (a SettingsArg) String() string {
	parts := make([]string, len(a.Settings))
	for i, s := range a.Settings {
		v := s.Value
		if strings.Contains(v, ",") {
			v = "'" + v + "'"
		}
		parts[i] = s.Name + "=" + v
	}
	return strings.Join(append(parts, extStrings(a.Extensions)...), ",")
}

func (a SettingsArg) plan(ctx context.Context, spec Spec, o *opening) (starter, error) {
	bin, err := FindBinDir(o.opt.PGBin, o.opt.Words)
	if err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	if len(a.Extensions) == 0 {
		return &clusterStart{spec: spec, bin: bin, settings: a.Settings, opt: o.opt}, nil
	}
	bld, err := buildOf(ctx, spec, a, o)
	if err != nil {
		return nil, err
	}
	copyBin, err := FindBinDir(bld.BinDir(), Words{})
	if err != nil {
		return nil, named(spec, fmt.Errorf("the build in %s: %w", bld.Root, err))
	}
	rec := installedRecord(ctx, bld, bin, a.Extensions)
	return &clusterStart{spec: spec, bin: copyBin, settings: a.Settings, opt: o.opt, record: func(t *result.Target) { t.Build = rec }}, nil
}

// source is how progress lines name what is built: the extensions for the
// installed server.
func (a SettingsArg) source(bin string) string {
	names := make([]string, len(a.Extensions))
	for i, e := range a.Extensions {
		names[i] = e.Source.String()
	}
	return strings.Join(names, " and ") + " for the installed server (" + bin + ")"
}

func (a SettingsArg) needsBuild() bool { return len(a.Extensions) > 0 }

func (a SettingsArg) what(spec Spec, o *opening) (build.Spec, string, error) {
	bin, err := FindBinDir(o.opt.PGBin, o.opt.Words)
	if err != nil {
		return nil, "", err
	}
	return installed(spec, bin, a.Extensions), a.source(bin), nil
}

// settingsOf returns a settings target's settings, and whether spec is
// one that differs from the default cluster in server settings only, and
// so may run on another's cluster (DecideSharing): a target with
// extensions runs a server of its own.
func settingsOf(spec Spec) ([]Setting, bool) {
	a, ok := spec.Arg.(SettingsArg)
	return a.Settings, ok && len(a.Extensions) == 0
}
