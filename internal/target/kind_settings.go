package target

import (
	"context"
	"errors"
	"strings"

	"github.com/pgscale/pgscale/internal/usage"
)

// Settings is an ephemeral cluster from the default binaries with its own
// server settings: NAME=settings:k=v,...
const Settings Kind = "settings"

var settingsKind = kind{
	name: Settings, form: "settings:k=v,...", ephemeral: true, counts: true,
	help: "an ephemeral cluster from the default server binaries (--pg-bin) with those server settings; " +
		"quote a value holding commas: k='a,b'",
	parse: func(arg string) (Arg, error) {
		settings, err := parseSettings(arg)
		if err != nil {
			return nil, err
		}
		for _, st := range settings {
			if st.Name == "ext" {
				return nil, errors.New("ext= builds an extension against a server pgscale builds (src:PATH,ext=EXTPATH); an extension for the installed server (its server headers at the exact version, postgresql-server-dev-NN) is not supported yet")
			}
		}
		return SettingsArg{Settings: settings}, nil
	},
}

// SettingsArg is a settings target's server settings, applied after
// pgscale's defaults and the run's --set settings.
type SettingsArg struct{ Settings []Setting }

// String returns the settings as k=v,...
func (a SettingsArg) String() string {
	parts := make([]string, len(a.Settings))
	for i, s := range a.Settings {
		v := s.Value
		if strings.Contains(v, ",") {
			v = "'" + v + "'"
		}
		parts[i] = s.Name + "=" + v
	}
	return strings.Join(parts, ",")
}

func (a SettingsArg) plan(_ context.Context, spec Spec, o *opening) (starter, error) {
	bin, err := FindBinDir(o.opt.PGBin)
	if err != nil {
		return nil, usage.Wrap(named(spec, err))
	}
	return &clusterStart{spec: spec, bin: bin, settings: a.Settings, opt: o.opt}, nil
}

// settingsOf returns a settings target's settings, and whether spec is
// one: targets that differ from one another in server settings only, and
// so may run on one cluster (DecideSharing).
func settingsOf(spec Spec) ([]Setting, bool) {
	a, ok := spec.Arg.(SettingsArg)
	return a.Settings, ok
}
