package html_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// flameFrame is a frame of a graph as the page's data block holds it.
type flameFrame struct {
	Name        string  `json:"name"`
	Depth       int     `json:"depth"`
	Start       int64   `json:"start"`
	Value       int64   `json:"value"`
	BaseShare   float64 `json:"baseline_share"`
	CandShare   float64 `json:"candidate_share"`
	Significant bool    `json:"significant"`
}

// graphFrames reads a graph's frames from a page's data block.
func graphFrames(t *testing.T, pg []byte, id string) []flameFrame {
	t.Helper()
	var data struct {
		Profiles []struct {
			ID     string       `json:"id"`
			Frames []flameFrame `json:"frames"`
		} `json:"profiles"`
		Diffs []struct {
			ID     string       `json:"id"`
			Frames []flameFrame `json:"frames"`
		} `json:"flame_diffs"`
	}
	if err := json.Unmarshal(embeddedData(t, pg), &data); err != nil {
		t.Fatal(err)
	}
	for _, p := range data.Profiles {
		if p.ID == id {
			return p.Frames
		}
	}
	for _, d := range data.Diffs {
		if d.ID == id {
			return d.Frames
		}
	}
	t.Fatalf("no graph %s in the data block", id)
	return nil
}

// boxOf is where frame i of graph id lies on the screen, scrolled into
// view: its centre and width in CSS pixels, and its width in the graph's
// units.
const boxOf = `((id, i) => { const g = document.querySelector("#" + id + " g[data-i='" + i + "']");
	if (!g || g.style.display === "none") return [-1, -1, -1, -1];
	g.scrollIntoView({block: "center"}); const r = g.querySelector("rect"), b = r.getBoundingClientRect();
	return [b.left + Math.min(b.width / 2, 20), b.top + b.height / 2, b.width, Number(r.getAttribute("width"))] })`

// TestFlameGraphInteractive drives the differential flame graph of the
// abdiff fixture as a reader would, with Chromium's own mouse and
// keyboard: hovering a frame shows its function, both sides' samples per
// transaction and both shares, a click
// zooms into its subtree and "Reset zoom" goes back, and a search for a
// function highlights exactly the frames whose name holds it and says
// their share.
func TestFlameGraphInteractive(t *testing.T) {
	needBrowser(t)
	pg := fixturePage(t, "abdiff/base.json", "abdiff/slow.json")
	const id = "flame-diff-0-1-c2"
	frames := graphFrames(t, pg, id)
	ctx, v := open(t, "flame", pg, 1400, 900)
	// The widest frame at depth 3 or more that is under 60% of the
	// graph: room to hover, and a zoom that shows.
	pick := -1
	for i, f := range frames {
		if f.Depth >= 3 && 10*f.Value < 6*frames[0].Value && (pick < 0 || f.Value > frames[pick].Value) {
			pick = i
		}
	}
	if pick < 0 {
		t.Fatal("the graph has no frame to zoom into")
	}
	f := frames[pick]
	box := eval[[]float64](t, ctx, fmt.Sprintf("%s(%q, %d)", boxOf, id, pick))
	if box[0] < 0 {
		t.Fatalf("frame %d (%s) is not drawn", pick, f.Name)
	}
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box[0], box[1])); err != nil {
		t.Fatal(err)
	}
	tip := eval[[]string](t, ctx, `(() => { const t = document.querySelector(".flame-tip"); return [String(t.hidden), t.textContent] })()`)
	if tip[0] != "false" || !strings.HasPrefix(tip[1], f.Name+"\n") ||
		!strings.Contains(tip[1], fmt.Sprintf("slow: %.1f%% of its samples; base: %.1f%%", 100*f.CandShare, 100*f.BaseShare)) ||
		!strings.Contains(tip[1], " samples a transaction; base: ") {
		t.Errorf("hovering %s shows %q (hidden %s)", f.Name, tip[1], tip[0])
	}
	writeShot(t, ctx, "flame-hover")

	// A click zooms: the frame fills the graph, and a frame beside it goes.
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(box[0], box[1])); err != nil {
		t.Fatal(err)
	}
	zoomed := eval[[]float64](t, ctx, fmt.Sprintf("%s(%q, %d)", boxOf, id, pick))
	if zoomed[3] != 1000 {
		t.Errorf("after a click on %s its box is %v units wide, want the whole graph (1000)", f.Name, zoomed[3])
	}
	outside := -1
	for i, o := range frames {
		if o.Depth == f.Depth && (o.Start+o.Value <= f.Start || o.Start >= f.Start+f.Value) {
			outside = i
			break
		}
	}
	if outside >= 0 {
		if b := eval[[]float64](t, ctx, fmt.Sprintf("%s(%q, %d)", boxOf, id, outside)); b[0] >= 0 {
			t.Errorf("zoomed into %s, the frame %s beside it is still drawn", f.Name, frames[outside].Name)
		}
	}
	writeShot(t, ctx, "flame-zoom")
	eval[bool](t, ctx, `document.querySelector("#fig-`+id+` button").click(), true`)
	if back := eval[[]float64](t, ctx, fmt.Sprintf("%s(%q, %d)", boxOf, id, pick)); back[3] != box[3] {
		t.Errorf("after Reset zoom %s is %v units wide, want %v again", f.Name, back[3], box[3])
	}

	// A search highlights every frame whose function holds the term.
	const term = "printf"
	want, wantSig := 0, 0
	for _, o := range frames {
		if strings.Contains(strings.ToLower(o.Name), term) {
			want++
			if o.Significant {
				wantSig++
			}
		}
	}
	if want < 2 {
		t.Fatalf("the fixture has %d frames of *%s*: pick another term", want, term)
	}
	sel := chromedp.CSS("#fig-" + id + ` input[type="search"]`)
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(sel), chromedp.Click(sel), chromedp.SendKeys(sel, term)); err != nil {
		t.Fatal(err)
	}
	got := eval[[]string](t, ctx, `[String(document.querySelectorAll("#`+id+` g.match").length), document.querySelector("#fig-`+id+` .flame-status").textContent,
		[...document.querySelectorAll("#`+id+` g.match")].map(g => getComputedStyle(g.querySelector("rect")).fill).join(" ")]`)
	if got[0] != fmt.Sprint(want) || !strings.HasPrefix(got[1], fmt.Sprintf("%d frames match, ", want)) || !strings.HasSuffix(got[1], "% of the samples") {
		t.Errorf("searching %q highlights %s frames (%q), want %d", term, got[0], got[1], want)
	}
	if strings.Contains(got[2], "rgb(225, 225, 222)") {
		t.Errorf("a highlighted frame keeps its pale fill: %s", got[2])
	}
	writeShot(t, ctx, "flame-search")
	v.quiet(t)
}

// TestFlameGraphHostileName: a function named like markup shows as text
// in the graph and in the hover, and makes no element.
func TestFlameGraphHostileName(t *testing.T) {
	needBrowser(t)
	ctx, v := open(t, "flame-hostile", writePage(t, hostileDoc(t)), 1100, 900)
	id := eval[string](t, ctx, `document.querySelector("div.flamegraph").id`)
	labels := eval[string](t, ctx, `[...document.querySelectorAll("div.flamegraph svg text")].map(t => t.textContent).join("|")`)
	if !strings.Contains(labels, evilFunc[:10]) {
		t.Errorf("the graph does not show the function's name as text: %q", labels)
	}
	box := eval[[]float64](t, ctx, fmt.Sprintf("%s(%q, %d)", boxOf, id, 2))
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box[0], box[1])); err != nil {
		t.Fatal(err)
	}
	if tip := eval[string](t, ctx, `document.querySelector(".flame-tip").textContent`); !strings.HasPrefix(tip, evilFunc+"\n") {
		t.Errorf("the hover shows %q, want the name as text", tip)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("img, [onerror]").length`); n != 0 {
		t.Errorf("%d elements made from the function's name", n)
	}
	v.quiet(t)
}

// writeShot writes the screen as it is into -shots, when given.
func writeShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if *shots == "" {
		return
	}
	time.Sleep(50 * time.Millisecond)
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(*shots, name+".png"), png, 0o644)
}

// TestFlameGraphWithoutScript: with JavaScript off, a page of flame
// graphs still reads: each graph's table of its frames and the note that
// the graphs need the script, and no empty search box.
func TestFlameGraphWithoutScript(t *testing.T) {
	needBrowser(t)
	noScript := func(ctx context.Context) error {
		_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}
	ctx, v := open(t, "flame-noscript", fixturePage(t, "abdiff/base.json", "abdiff/slow.json"), 1400, 900, noScript)
	got := eval[[]int](t, ctx, `[document.querySelectorAll("div.flamegraph svg").length, document.querySelectorAll("div.flamegraph").length,
		document.querySelectorAll("details.flame-top table tr").length, document.querySelectorAll("input[type=search]").length]`)
	if got[0] != 0 || got[1] == 0 || got[2] <= got[1] || got[3] != 0 {
		t.Errorf("without JavaScript: %d graphs drawn of %d, %d table rows, %d search boxes; want none drawn, a table each, no search box", got[0], got[1], got[2], got[3])
	}
	// The <noscript> note is an element, shown, only when scripts are off.
	if note := eval[string](t, ctx, `(() => { const p = document.querySelector("#profiles noscript p.note");
		return p && p.getBoundingClientRect().height > 0 ? p.textContent : "" })()`); !strings.Contains(note, "without JavaScript the tables") {
		t.Errorf("no note shown that the graphs need the script: %q", note)
	}
	v.quiet(t)
}
