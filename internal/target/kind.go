// Package target says where the server is: a target of one of the kinds
// registered in kind.go (an ephemeral cluster, an existing server, a pooler
// in front of one), which it starts, health-checks, stops and cleans up.
package target

import (
	"context"
	"strings"
)

// Kind names a kind of target, as written before the colon of a target
// spec: "bin" in NAME=bin:DIR.
type Kind string

// String returns the kind's name.
func (k Kind) String() string { return string(k) }

// kind is what one kind of target registers, in a file of its own
// (kind_NAME.go): how a target of it is written and read, what it is, and,
// through the Arg its parse returns, how it is opened.
type kind struct {
	name Kind
	// form is how a target of the kind is written after NAME=, of= left
	// out: "bin:DIR", "pgbouncer:k=v,...".
	form string
	// help says what such a target is, in a sentence or two, for a
	// command's help, naming the run's options as w calls them.
	help func(w Words) string
	// ephemeral says pgscale starts the target's server itself. (A kind
	// that fronts other targets is as ephemeral as what it fronts.)
	ephemeral bool
	// fronts is how many targets one of the kind may stand in front of
	// (of=NAME, repeated: a pooler or proxy; by default the first target
	// that is not in front of another); 0 for a kind that is a server.
	fronts int
	// counts says its server can run under Valgrind (--count
	// instructions).
	counts bool
	// builds says its Arg builds what the target starts (a builder):
	// pgscale build makes it ahead of a run.
	builds bool
	// parse reads what follows the colon, of= taken out; its errors say
	// what is wrong in one line, without the spec (ParseSpec adds it).
	parse func(arg string) (Arg, error)
	// split, when set, takes the kind's own argument off the front of
	// what follows the colon, when it holds commas the comma list must
	// not split (a proxy's inline definition), and returns it and the
	// rest (of= items); own is empty when the argument is an ordinary
	// comma list.
	split func(arg string) (own, rest string, err error)
	// def, when set, reads the kind's argument given as a definition in
	// a suite file (YAML, as written there) instead of as text; dir is
	// the directory its relative paths are taken from.
	def func(data []byte, dir string) (Arg, error)
	// defaultOf, when set, is the targets a target of the kind fronts
	// when its spec names none (a proxy definition's of:).
	defaultOf func(Arg) []string
}

// kinds are the registered kinds, in the order help texts list them. A new
// kind is a file that defines its kind value, and one line here.
var kinds = []kind{
	binKind,
	settingsKind,
	srcKind,
	dsnKind,
	pgbouncerKind,
	proxyKind,
}

// Kinds returns the registered kinds, in the order help texts list them.
func Kinds() []Kind {
	out := make([]Kind, len(kinds))
	for i, k := range kinds {
		out[i] = k.name
	}
	return out
}

// lookup returns the registered kind named name, or nil.
func lookup(name Kind) *kind {
	for i := range kinds {
		if kinds[i].name == name {
			return &kinds[i]
		}
	}
	return nil
}

// Arg is what follows KIND: in a target spec, as its kind read it. Each
// kind has its own (BinArg, SettingsArg, DSNArg, PgBouncerArg, SrcArg).
type Arg interface {
	// String writes the argument back as it can be given again, with any
	// password redacted.
	String() string
	// plan checks, before anything starts, what opening the target
	// needs (binaries found, settings checked: a mistake is a usage
	// error), and returns how to start it; a kind that builds or fetches
	// something does it here, saying what it does through o.log.
	plan(ctx context.Context, spec Spec, o *opening) (starter, error)
}

// starter starts one target that its kind's plan checked.
type starter interface {
	// frontConnections is how many server connections the target opens
	// to each server it stands in front of (0 for a server), which that
	// server is sized for.
	frontConnections() int
	// start starts the target in front of fronts (one server per name in
	// its spec's Of; none for a server), sized for needs; log receives
	// one-line notices. A failed start leaves nothing running.
	start(ctx context.Context, fronts []*Server, needs Needs, log func(string)) (*Server, error)
}

// opening is what every target opened together is opened with.
type opening struct {
	opt   ClusterOptions
	needs Needs
	log   func(string)
}

// Forms lists how a target of each kind is written, as flag help and
// errors say it: "NAME=bin:DIR, NAME=settings:k=v,... or ...".
func Forms() string { return forms("NAME=") }

// forms lists the kinds' forms, each after prefix.
func forms(prefix string) string {
	var out []string
	for _, k := range kinds {
		out = append(out, prefix+k.fullForm())
	}
	return orList(out)
}

// Help describes every kind of target for a command's help: its form on a
// line, then what it is, indented and wrapped, the run's options named as
// words calls them.
func Help(words Words) string {
	var b strings.Builder
	for _, k := range kinds {
		b.WriteString("  NAME=" + k.fullForm() + "\n")
		line := "     "
		for _, w := range strings.Fields(k.help(words)) {
			if len(line)+1+len(w) > 78 {
				b.WriteString(line + "\n")
				line = "     "
			}
			line += " " + w
		}
		b.WriteString(line + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// PoolerForms lists how run's --pooler names a pooler started in front of
// its server: the kinds that front a target, each alone (when it needs
// no argument) or with its argument ("pgbouncer or pgbouncer:k=v,...").
func PoolerForms() string {
	var forms []string
	for _, k := range kinds {
		if k.fronts > 0 {
			if _, err := k.parse(""); err == nil {
				forms = append(forms, string(k.name))
			}
			forms = append(forms, k.form)
		}
	}
	return orList(forms)
}

// fullForm is the kind's form with of= where it takes one.
func (k *kind) fullForm() string {
	if k.fronts == 0 {
		return k.form
	}
	name, arg, _ := strings.Cut(k.form, ":")
	if arg == "" {
		return name + ":[of=NAME]"
	}
	return name + ":[of=NAME,]" + arg
}

// EphemeralKinds lists the kinds whose server pgscale starts itself, as
// errors say them: "bin:, settings: or src:".
func EphemeralKinds() string { return kindsWhere(func(k *kind) bool { return k.ephemeral }) }

// CountingKinds lists the kinds of server that can run under Valgrind, as
// errors say them (a pooler in front of one counts too).
func CountingKinds() string {
	return kindsWhere(func(k *kind) bool { return k.counts && k.fronts == 0 })
}

// kindsWhere lists, as "bin: or settings:", the kinds for which keep is
// true.
func kindsWhere(keep func(*kind) bool) string {
	var names []string
	for i := range kinds {
		if keep(&kinds[i]) {
			names = append(names, string(kinds[i].name)+":")
		}
	}
	return orList(names)
}

// orList joins "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
