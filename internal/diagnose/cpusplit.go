package diagnose

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/pgscale/pgscale/internal/result"
)

// CPUSplit divides a step's server cost per transaction by who did the
// work, from its profile: by shared object (the extension's and other
// modules of the server, the server itself, libc, the kernel, the rest)
// and by function. With perf's samples each part is its share of the
// samples times the server CPU per transaction the process probe measured,
// with a 95% interval from the number of samples; with instructions
// counted under Valgrind, its share of the client backends' instructions
// per transaction, exact.
type CPUSplit struct {
	// Counted says the parts are instructions counted under Valgrind
	// (exact, no interval); otherwise µs of CPU from perf's samples.
	Counted bool
	// PerTxn is the whole the parts divide: the server's CPU per
	// transaction in µs, or the client backends' instructions per
	// transaction.
	PerTxn float64
	// Samples are the profile's samples (or instructions) of that work,
	// Hz perf's rate (0 when counted or not kept).
	Samples int64
	Hz      int
	// Groups are the parts by kind, in KindOrder; Objects each object's;
	// Functions the functions with the most own samples, with their
	// objects (at most MaxSplitFunctions).
	Groups    []SplitPart
	Objects   []SplitPart
	Functions []SplitPart
	// Unnamed are the objects with functions no symbol names, and why.
	Unnamed []UnnamedCode
	// Expected is how many samples perf's rate would take of the CPU the
	// server's processes used (their CPU seconds times Hz; 0 when not
	// known): Samples far under it says perf missed some.
	Expected float64
	// Caution says why the parts are coarse: too few samples at this
	// rate, with what would give more; or perf's samples far fewer than
	// the server's CPU would give. Empty when neither.
	Caution string
}

// SplitPart is one part of a CPUSplit.
type SplitPart struct {
	Name string // a kind (Groups), an object's file name, a function
	Kind string // KindExtension, KindServer, KindLibc, KindKernel, KindOther
	// Object is the function's object's file name (Functions), or the
	// objects a group holds, most first (Groups).
	Object  string
	Objects []string
	Share   float64 // of Samples
	PerTxn  float64 // µs (or instructions) per transaction
	// Margin is the half-width of the 95% interval of PerTxn (0: counted).
	Margin float64
	// TotalPerTxn is the function's with its callees (Functions).
	TotalPerTxn float64
}

// UnnamedCode is an object whose functions the profile could not name.
type UnnamedCode struct {
	Object string  // its file name
	Share  float64 // of the samples, in functions without a name
	Reason string  // why, and what would name them
	// Also is a remedy that would name them too, which the renderers
	// word after Reason; 0 when none.
	Also Remedy
}

// The kinds of a CPUSplit's parts, in the order the reports list them.
const (
	KindExtension = "extension"
	KindServer    = "server"
	KindLibc      = "libc"
	KindKernel    = "kernel"
	KindOther     = "other"
)

// KindOrder is the order of a split's groups.
var KindOrder = []string{KindExtension, KindServer, KindLibc, KindKernel, KindOther}

// MaxSplitFunctions is how many functions a split lists.
const MaxSplitFunctions = 8

// MinSplitSamples is the fewest samples of a split whose parts are not
// called coarse: at 100, a part of a quarter of the CPU is known to ±8.5
// points of it (95%). GoodSplitSamples is what a split's caution asks
// for: at 400, ±4 points.
const (
	MinSplitSamples  = 100
	GoodSplitSamples = 400
)

// MinUnnamedShare is the least share of a split's samples in an object's
// unnamed functions that the split says why of (UnnamedCode).
const MinUnnamedShare = 0.005

// z95 is the normal quantile of a two-sided 95% interval.
const z95 = 1.959964

var libcObject = regexp.MustCompile(`^(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)[.-].*so`)

// objectKind is which part an object's work belongs to; server is the
// server executable's path ("" when not seen), whose lib directory holds
// its modules.
func objectKind(object, server string) string {
	base := filepath.Base(object)
	switch {
	case strings.HasPrefix(object, "[kernel") || object == "[vdso]" || object == "[vsyscall]":
		return KindKernel
	case object == server || base == "postgres":
		return KindServer
	case libcObject.MatchString(base):
		return KindLibc
	case strings.HasSuffix(base, ".so") && isModuleDir(filepath.Dir(object), server):
		return KindExtension
	}
	return KindOther
}

// isModuleDir says whether dir holds the server's loadable modules (its
// pkglibdir): beside the server's bin directory (Debian's
// /usr/lib/postgresql/15/lib, a source build's PREFIX/lib), or a
// postgresql directory under a lib directory (PREFIX/lib/postgresql).
func isModuleDir(dir, server string) bool {
	if server != "" {
		lib := filepath.Join(filepath.Dir(filepath.Dir(server)), "lib")
		if dir == lib || dir == filepath.Join(lib, "postgresql") {
			return true
		}
	}
	return strings.Contains(dir+"/", "/postgresql/")
}

// cpuSplit is the step's split, or nil without a profile of its work
// (files written before the profile kept its objects) or without the
// cost per transaction it divides.
func cpuSplit(p *result.Probes, f Figures) *CPUSplit {
	pr := p.Profile()
	// A file written before profiles kept their objects has none, and
	// no rate either; a profile of no sample keeps its rate, and its
	// split says why it has no parts.
	if pr == nil || len(pr.Objects) == 0 && (pr.Hz == 0 || pr.Unit != "") {
		return nil
	}
	sp := &CPUSplit{Counted: pr.Unit == "instructions", Samples: pr.Work, Hz: pr.Hz}
	if sp.Counted {
		in := p.Instructions()
		if in == nil || in.PerTxn <= 0 {
			return nil
		}
		sp.PerTxn = in.PerTxn
	} else {
		if !f.HasServer || f.ServerCPUPerTxnUS <= 0 {
			return nil
		}
		sp.PerTxn = f.ServerCPUPerTxnUS
		if txns := f.TPS * f.ElapsedS; pr.Hz > 0 && txns > 0 {
			sp.Expected = f.ServerCPUPerTxnUS * txns / 1e6 * float64(pr.Hz)
		}
	}
	n := float64(pr.Work)
	part := func(name, kind string, self int64) SplitPart {
		sh := 0.0
		if n > 0 {
			sh = float64(self) / n
		}
		pt := SplitPart{Name: name, Kind: kind, Share: sh, PerTxn: sh * sp.PerTxn}
		if !sp.Counted && n > 0 {
			pt.Margin = z95 * math.Sqrt(sh*(1-sh)/n) * sp.PerTxn
		}
		return pt
	}
	server := ""
	for _, o := range pr.Objects {
		if filepath.Base(o.Object) == "postgres" {
			server = o.Object
			break
		}
	}
	groups := map[string]int64{}
	members := map[string][]string{}
	for _, o := range pr.Objects {
		kind := objectKind(o.Object, server)
		groups[kind] += o.Self
		members[kind] = append(members[kind], objectName(o.Object))
		sp.Objects = append(sp.Objects, part(objectName(o.Object), kind, o.Self))
		// Unnamed code under half a percent is not worth a reason: the
		// flame graph shows it, and a larger object of the same package
		// gives the same one.
		if n > 0 && float64(o.Unnamed)/n >= MinUnnamedShare {
			reason, also := unnamedReason(o, kind)
			sp.Unnamed = append(sp.Unnamed, UnnamedCode{Object: objectName(o.Object), Share: float64(o.Unnamed) / n,
				Reason: reason, Also: also})
		}
	}
	for _, k := range KindOrder {
		if c, ok := groups[k]; ok {
			g := part(k, k, c)
			g.Objects = members[k]
			sp.Groups = append(sp.Groups, g)
		}
	}
	for _, fn := range pr.Functions {
		if len(sp.Functions) == MaxSplitFunctions {
			break
		}
		pt := part(fn.Function, objectKind(fn.Object, server), fn.Self)
		pt.Object = objectName(fn.Object)
		if n > 0 {
			pt.TotalPerTxn = float64(fn.Total) / n * sp.PerTxn
		}
		sp.Functions = append(sp.Functions, pt)
	}
	sort.SliceStable(sp.Unnamed, func(i, j int) bool { return sp.Unnamed[i].Share > sp.Unnamed[j].Share })
	sp.Caution = splitCaution(sp, f)
	return sp
}

// objectName is how the split names an object: its file's name, the
// kernel as "[kernel]".
func objectName(object string) string {
	if strings.HasPrefix(object, "[kernel") {
		return "[kernel]"
	}
	if object == "" || object == "???" { // callgrind's name for no object
		return "[unknown]"
	}
	return filepath.Base(object)
}

// splitCaution says why a perf split is coarse, or "".
func splitCaution(sp *CPUSplit, f Figures) string {
	if sp.Counted {
		return ""
	}
	rate := ""
	if sp.Hz > 0 {
		rate = fmt.Sprintf(" at %d Hz", sp.Hz)
	}
	if sp.Samples == 0 {
		s := fmt.Sprintf("perf took no sample of the server's work%s in %.1f s", rate, f.ElapsedS)
		if sp.Expected >= 1 {
			s += fmt.Sprintf(", where the server's %.2f s of CPU would give about %.0f", sp.Expected/float64(max(sp.Hz, 1)), sp.Expected)
		}
		return s
	}
	var out []string
	if sp.Samples < MinSplitSamples {
		s := fmt.Sprintf("too few samples to split the CPU finely: %d%s in %.1f s", sp.Samples, rate, f.ElapsedS)
		if f.ElapsedS > 0 {
			need := math.Ceil(float64(GoodSplitSamples) / (float64(sp.Samples) / f.ElapsedS))
			s += fmt.Sprintf("; %d (a part of a quarter to ±4 points) would take steps of about %.0f s at this load (-T %.0f), or more transactions (-t)",
				GoodSplitSamples, need, need)
		}
		out = append(out, s)
	}
	if sp.Expected >= 20 && float64(sp.Samples) < 0.5*sp.Expected {
		out = append(out, fmt.Sprintf("perf took %d samples where the server's %.2f s of CPU would give %.0f%s (%.0f%%): the parts are shares of the CPU the process probe measured, in the proportions perf saw",
			sp.Samples, sp.Expected/float64(max(sp.Hz, 1)), sp.Expected, rate, 100*float64(sp.Samples)/sp.Expected))
	}
	return strings.Join(out, "; ")
}

// unnamedReason says why an object's functions have no name, and what
// would name them; also is a remedy that would name them too (a server
// built from source, for the server a debug package would name), 0 when
// none.
func unnamedReason(o result.ProfileObject, kind string) (reason string, also Remedy) {
	name := objectName(o.Object)
	sy := o.Symbols
	switch {
	case kind == KindKernel:
		return "the kernel's symbols were not readable (/proc/kallsyms: kernel.kptr_restrict)", 0
	case sy == nil && name == "[unknown]":
		return "code in no file the profiler knew (generated code, or a mapping already gone)", 0
	case sy == nil:
		return name + " is not a file pgscale could read", 0
	case sy.Source == "none" && sy.Error != "":
		return fmt.Sprintf("%s could not be read (%s)", o.Object, sy.Error), 0
	case sy.Source == "debug file" || sy.Source == "symbol table":
		// Named from a full symbol table, yet unnamed: code outside any
		// function (PLT stubs, JIT code).
		return fmt.Sprintf("code in %s outside any function its %s names (PLT stubs, generated code)", name, sy.Source), 0
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is stripped and no debug file is installed for it", name)
	switch {
	case len(sy.Looked) > 1:
		fmt.Fprintf(&b, " (%s, nor by its .gnu_debuglink)", sy.Looked[0])
	case len(sy.Looked) == 1:
		fmt.Fprintf(&b, " (%s)", sy.Looked[0])
	case sy.BuildID == "":
		b.WriteString(" (it has no build id to find one by)")
	}
	b.WriteString(": its dynamic symbols name its exported functions, not its static ones; ")
	switch {
	case sy.Package != "":
		v := ""
		if sy.PackageVersion != "" {
			v = " " + sy.PackageVersion
		}
		fmt.Fprintf(&b, "%s-dbgsym%s from Debian's debug archive (its debian-debug suite) names them", sy.Package, v)
		if kind == KindServer {
			also = SourceBuild
		}
	case kind == KindExtension:
		b.WriteString("building it with its symbols kept (not stripped at install) names them")
	default:
		b.WriteString("its debug file, installed under " + "/usr/lib/debug/.build-id" + ", names them")
	}
	return b.String(), also
}

// UnnamedOf is every object some step's split could not name, once, with
// the largest share of a step's samples it held, in the order first seen:
// a report says why once per file, not once per step.
func UnnamedOf(figs []Figures) []UnnamedCode {
	var out []UnnamedCode
	at := map[string]int{}
	for _, f := range figs {
		if f.Split == nil {
			continue
		}
		for _, u := range f.Split.Unnamed {
			if i, ok := at[u.Object]; ok {
				out[i].Share = max(out[i].Share, u.Share)
				continue
			}
			at[u.Object] = len(out)
			out = append(out, u)
		}
	}
	return out
}
