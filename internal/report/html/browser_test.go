package html_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/pgscale/pgscale/internal/golden"
	"github.com/pgscale/pgscale/internal/testenv"
)

var shots = flag.String("shots", "", "also write each page's screenshots and PDF into this directory")

// browser is the package's one headless Chromium, started in TestMain;
// noBrowser says why there is none.
var (
	browser   context.Context
	noBrowser error
)

func TestMain(m *testing.M) {
	golden.RegisterFlag()
	flag.Parse()
	os.Exit(runWithBrowser(m))
}

func runWithBrowser(m *testing.M) int {
	if testenv.Short() {
		return m.Run() // the browser tests are the full suite's (needBrowser)
	}
	exe, err := exec.LookPath("chromium")
	if err != nil {
		noBrowser = errors.New("chromium is not installed (Debian: apt-get install chromium)")
		return m.Run() // the browser tests skip, or fail with CI=true (needBrowser)
	}
	dir, err := os.MkdirTemp("", "pgscale-chromium-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// As root, without a sandbox, with nothing in the background that
	// would reach for the network, and a fresh profile.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(dir),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.WindowSize(1100, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil {
		fmt.Fprintln(os.Stderr, "html tests: starting chromium:", err)
		return 1
	}
	browser = bctx
	return m.Run()
}

// needBrowser marks a test that opens pages: the full suite's
// (testenv.Browser), and it needs chromium.
func needBrowser(t *testing.T) {
	t.Helper()
	testenv.Browser(t)
	testenv.Need(t, noBrowser)
}

// visit is what a page did while it was open.
type visit struct {
	mu       sync.Mutex
	console  []string // console messages, exceptions and log entries
	requests []string // URLs requested besides the page itself
	dialogs  []string
}

func (v *visit) add(list *[]string, s string) {
	v.mu.Lock()
	*list = append(*list, s)
	v.mu.Unlock()
}

// open writes pg to a file, opens it in a new tab and records what the
// page logs, requests and opens; the tab closes with the test. Each of
// setup runs in the tab before the page loads.
func open(t *testing.T, name string, pg []byte, width, height int64, setup ...func(context.Context) error) (context.Context, *visit) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".html")
	if err := os.WriteFile(path, pg, 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + path
	v := &visit{}
	var ctx context.Context
	listen := func(ev any) {
		// This runs in the tab's message loop: record, never call.
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			v.add(&v.console, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			v.add(&v.console, "exception: "+msg)
		case *log.EventEntryAdded:
			v.add(&v.console, fmt.Sprintf("log %s %s: %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
		case *network.EventRequestWillBeSent:
			if e.Request.URL != url {
				v.add(&v.requests, e.Request.URL)
			}
		case *page.EventJavascriptDialogOpening:
			v.add(&v.dialogs, string(e.Type)+": "+e.Message)
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithListener(listen))
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancelT)
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range setup {
		if err := f(ctx); err != nil {
			t.Fatal(err)
		}
	}
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(width, height),
		chromedp.Navigate(url),
		chromedp.WaitReady(chromedp.ID("pgscale-data")),
	)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	return ctx, v
}

// quiet checks that the page logged nothing, fetched nothing and opened
// no dialog.
func (v *visit) quiet(t *testing.T) {
	t.Helper()
	// Give late events (a CSP report, a lazy request) a moment to arrive.
	time.Sleep(200 * time.Millisecond)
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, c := range v.console {
		t.Errorf("console: %s", c)
	}
	for _, r := range v.requests {
		t.Errorf("request left the page: %s", r)
	}
	for _, d := range v.dialogs {
		t.Errorf("dialog opened: %s", d)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return out
}

// TestBrowser opens each fixture page in Chromium: no console message, no
// request, the expected charts drawn with a size, and a screenshot.
func TestBrowser(t *testing.T) {
	testenv.Slow(t)
	needBrowser(t)
	out := *shots
	if out == "" {
		out = t.TempDir()
	}
	for _, pg := range pages {
		t.Run(pg.name, func(t *testing.T) {
			ctx, v := open(t, pg.name, fixturePage(t, pg.files...), 1100, 900)
			waitDrawn(t, ctx)
			for _, id := range pg.charts {
				js := fmt.Sprintf(`(() => { const e = document.getElementById(%q); if (!e) return "missing";
					const r = e.getBoundingClientRect(); return r.width > 50 && r.height > 20 ? "ok" : "size " + r.width + "x" + r.height })()`, id)
				if got := eval[string](t, ctx, js); got != "ok" {
					t.Errorf("chart %s: %s", id, got)
				}
			}
			// Every chart box gets its chart: a canvas with a size.
			if bad := eval[[]string](t, ctx, `[...document.querySelectorAll("div.uchart")].filter(e => { const c = e.querySelector("canvas");
				return !c || c.getBoundingClientRect().width < 100 || c.getBoundingClientRect().height < 50 }).map(e => e.id)`); len(bad) > 0 {
				t.Errorf("charts not drawn: %v", bad)
			}
			// The data block holds what the golden test compares.
			if ok := eval[bool](t, ctx, `Array.isArray(JSON.parse(document.getElementById("pgscale-data").textContent).runs)`); !ok {
				t.Error("the data block does not parse in the browser")
			}
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(png, []byte("\x89PNG")) {
				t.Fatal("the screenshot is not a PNG")
			}
			if err := os.WriteFile(filepath.Join(out, pg.name+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
			if *shots != "" {
				top, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(out, pg.name+"-top.png"), top, 0o644)
				for _, id := range pg.charts {
					if el, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.ID(id))); err == nil {
						os.WriteFile(filepath.Join(out, pg.name+"-"+id+".png"), el, 0o644)
					}
				}
				// What a reader sees first past the header: the README's picture.
				eval[bool](t, ctx, `(document.getElementById("scaling") || document.body).scrollIntoView(), true`)
				view, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(out, pg.name+"-view.png"), view, 0o644)
			}
			v.quiet(t)
		})
	}
}

// TestPhoneWidth: at 390 px the page does not scroll sideways (wide
// tables scroll in their own box) and the charts shrink to the screen.
func TestPhoneWidth(t *testing.T) {
	testenv.Slow(t)
	needBrowser(t)
	for _, name := range []string{"sweep", "locks", "profile", "abregress", "abdiff"} {
		var files []string
		for _, pg := range pages {
			if pg.name == name {
				files = pg.files
			}
		}
		t.Run(name, func(t *testing.T) {
			ctx, v := open(t, name+"-phone", fixturePage(t, files...), 390, 844)
			if w := eval[[]float64](t, ctx, `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`); w[0] > w[1] {
				t.Errorf("the page is %v px wide on a %v px screen", w[0], w[1])
			}
			waitDrawn(t, ctx)
			if bad := eval[[]string](t, ctx, `[...document.querySelectorAll('div.uchart .uplot, div.flamegraph svg')].filter(s => s.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map(s => s.closest("[id]").id)`); len(bad) > 0 {
				t.Errorf("charts wider than the screen: %v", bad)
			}
			if *shots != "" {
				png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(*shots, name+"-phone.png"), png, 0o644)
			}
			v.quiet(t)
		})
	}
}

// TestPrint prints a page to PDF as a reader would.
func TestPrint(t *testing.T) {
	testenv.Slow(t)
	needBrowser(t)
	ctx, v := open(t, "print", writePage(t, readDoc(t, "sweep.json")), 1100, 900)
	pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF(chromedp.PDFPaper(chromedp.PaperA4), chromedp.PDFPrintBackground()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatal("PrintToPDF gave no PDF")
	}
	if *shots != "" {
		os.WriteFile(filepath.Join(*shots, "sweep.pdf"), pdf, 0o644)
	}
	v.quiet(t)
}

// TestComparisonColours: in the page of a real regression, significant
// changes for the worse are drawn red, changes that are not significant
// pale grey, as the reader sees them (computed styles), and the hover
// text of each change names its interval.
func TestComparisonColours(t *testing.T) {
	needBrowser(t)
	ctx, v := open(t, "colours", fixturePage(t, "abregress/base.json", "abregress/slow.json"), 1100, 900)
	cells := eval[[][]string](t, ctx, `[...document.querySelectorAll("#comparison-table td.chg")].map(td => [td.className, getComputedStyle(td).backgroundColor, td.textContent, td.title])`)
	if len(cells) != 8 {
		t.Fatalf("%d change cells, want 8", len(cells))
	}
	var worse, same int
	for _, c := range cells {
		var r, g, b int
		if _, err := fmt.Sscanf(c[1], "rgb(%d, %d, %d)", &r, &g, &b); err != nil {
			t.Fatalf("%s: background %q", c[2], c[1])
		}
		switch {
		case strings.Contains(c[0], "worse-"):
			worse++
			if r < g+40 || r < b+40 {
				t.Errorf("%s (%s) is drawn %s, not red", c[2], c[0], c[1])
			}
		case strings.Contains(c[0], "same"):
			same++
			if max(r, g, b)-min(r, g, b) > 8 || r < 200 {
				t.Errorf("%s (not significant) is drawn %s, not pale grey", c[2], c[1])
			}
		}
		if !strings.Contains(c[3], "interval") {
			t.Errorf("%s: hover text %q names no interval", c[2], c[3])
		}
	}
	if worse == 0 || same == 0 {
		t.Errorf("%d red and %d pale cells: the fixture should have both", worse, same)
	}
	v.quiet(t)
}

// TestNoClippedLabels: in every chart of every fixture page, the text
// uPlot lays out in the page (the title and the legend) lies inside the
// chart's box, as Chromium lays it out, and each chart is no wider than
// its box: a chart that overflowed would cut its labels off. (The axes'
// labels are drawn on the canvas, sized to the longest tick label.)
func TestNoClippedLabels(t *testing.T) {
	testenv.Slow(t)
	needBrowser(t)
	for _, pg := range pages {
		t.Run(pg.name, func(t *testing.T) {
			ctx, v := open(t, pg.name+"-labels", fixturePage(t, pg.files...), 1100, 900)
			waitDrawn(t, ctx)
			js := `[...document.querySelectorAll("div.uchart")].flatMap(box => {
				const b = box.getBoundingClientRect();
				return [...box.querySelectorAll(".u-title, .u-label, canvas")].map(x => [x.textContent || x.tagName, x.getBoundingClientRect()])
					.filter(([, r]) => r.width > 0 && (r.left < b.left - 1 || r.right > b.right + 1))
					.map(([text, r]) => box.id + ": " + text + " " + Math.round(b.left - r.left) + "/" + Math.round(r.right - b.right));
			})`
			if bad := eval[[]string](t, ctx, js); len(bad) > 0 {
				t.Errorf("text outside its chart: %q", bad)
			}
			v.quiet(t)
		})
	}
}
