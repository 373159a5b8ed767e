package html

import (
	_ "embed"
	"fmt"
	"math"
	"sort"
)

// flameJS draws the flame graphs in the page from its data block (hover,
// zoom, search); the page's Content-Security-Policy allows it by its hash.
//
//go:embed flame.js
var flameJS string

var flameScript = newScript(compact(flameJS))

// topFrames is how many of a graph's frames its table lists: the page's
// reading of a graph without its script.
const topFrames = 12

// flameView is a profile's flame graph for the template: its frames are
// drawn by the page's script from the data block; Top lists the frames
// with the most samples in the function itself, readable without it.
type flameView struct {
	profile
	Top []flameRow
}

// flameRow is one frame of a graph's table: its own samples and shares
// (a profile), or both sides' counts per transaction, the change and the
// relative change (a differential graph; shares and the change in points
// when the transactions are not known).
type flameRow struct {
	Name, Lib                      string
	Self                           int64
	SelfShare, Share               num
	BaseShare, CandShare, DeltaPts num
	BasePerTxn, CandPerTxn, Delta  num
	Change                         num
	PerTxn                         bool
	// ChangeText is the change per transaction and relative: "+4 (+6.5%)",
	// "+310 (new)".
	ChangeText string
}

// flameOf is a profile's graph with its table.
func flameOf(p profile) flameView {
	v := flameView{profile: p}
	if len(p.Frames) == 0 {
		return v
	}
	total := float64(p.Frames[0].Value)
	for _, f := range p.Frames {
		if f.Self > 0 && f.Depth > 0 {
			v.Top = append(v.Top, flameRow{Name: f.Name, Lib: f.Lib, Self: f.Self,
				SelfShare: num(float64(f.Self) / total), Share: num(float64(f.Value) / total)})
		}
	}
	sort.SliceStable(v.Top, func(i, j int) bool { return v.Top[i].Self > v.Top[j].Self })
	v.Top = v.Top[:min(len(v.Top), topFrames)]
	return v
}

// diffView is a differential graph for the template, its frames drawn by
// the page's script; Top lists the frames whose count per transaction
// changed most, of those drawn as changed.
type diffView struct {
	flameDiff
	Top []flameRow
}

// diffOf is a differential graph with its table.
func diffOf(d flameDiff) diffView {
	v := diffView{flameDiff: d}
	perTxn := d.CandTxns > 0 && d.BaseTxns > 0
	for _, f := range d.Boxes {
		if !f.Significant {
			continue
		}
		r := flameRow{Name: f.Name, Lib: f.Lib, BaseShare: f.BaseShare, CandShare: f.CandShare,
			DeltaPts: num(100 * float64(f.CandShare-f.BaseShare)), Change: f.Change, PerTxn: perTxn}
		if perTxn {
			r.BasePerTxn, r.CandPerTxn, r.Delta = f.BasePerTxn, f.CandPerTxn, f.CandPerTxn-f.BasePerTxn
			rel := "new"
			if c := float64(f.Change); !math.IsNaN(c) {
				rel = fmt.Sprintf("%+.1f%%", 100*c)
			}
			r.ChangeText = fmt.Sprintf("%s (%s)", fmtSigned(float64(r.Delta)), rel)
		}
		v.Top = append(v.Top, r)
	}
	key := func(r flameRow) float64 {
		if perTxn {
			return math.Abs(float64(r.Delta))
		}
		return math.Abs(float64(r.DeltaPts))
	}
	sort.SliceStable(v.Top, func(i, j int) bool { return key(v.Top[i]) > key(v.Top[j]) })
	v.Top = v.Top[:min(len(v.Top), topFrames)]
	return v
}

// fmtSigned is a signed count per transaction with the digits its size
// needs: +4.00, +11.0, +70004.
func fmtSigned(x float64) string {
	switch a := math.Abs(x); {
	case a >= 100:
		return fmt.Sprintf("%+.0f", x)
	case a >= 10:
		return fmt.Sprintf("%+.1f", x)
	}
	return fmt.Sprintf("%+.2f", x)
}
