package html

import (
	_ "embed"
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
// (a profile), or both sides' shares and the change in points (a
// differential graph).
type flameRow struct {
	Name, Lib                      string
	Self                           int64
	SelfShare, Share               num
	BaseShare, CandShare, DeltaPts num
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
// the page's script; Top lists the frames whose share changed most,
// beyond sampling noise.
type diffView struct {
	flameDiff
	Top []flameRow
}

// diffOf is a differential graph with its table.
func diffOf(d flameDiff) diffView {
	v := diffView{flameDiff: d}
	for _, f := range d.Frames {
		if f.Significant {
			v.Top = append(v.Top, flameRow{Name: f.Name, Lib: f.Lib, BaseShare: f.BaseShare, CandShare: f.CandShare,
				DeltaPts: num(100 * float64(f.CandShare-f.BaseShare))})
		}
	}
	sort.SliceStable(v.Top, func(i, j int) bool {
		return math.Abs(float64(v.Top[i].DeltaPts)) > math.Abs(float64(v.Top[j].DeltaPts))
	})
	v.Top = v.Top[:min(len(v.Top), topFrames)]
	return v
}
