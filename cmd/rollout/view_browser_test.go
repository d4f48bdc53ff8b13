package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// findChromium returns the path of a Chromium or Chrome binary, or "".
// .ci/run installs Debian's chromium when it is missing.
func findChromium() string {
	if p := os.Getenv("ROLLOUT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is a headless Chromium session that records what the page does:
// every request, every uncaught exception and every console or log error.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	requests []string
	problems []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := findChromium()
	if path == "" {
		t.Skip("browser test skipped: no Chromium found (install Debian's chromium, as .ci/run does, or set ROLLOUT_CHROMIUM)")
	}
	// Flags for a root user in a container without network: no sandbox,
	// and no background networking, which would flood refused connections.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1600),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	b := &browser{ctx: ctx}
	err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, ev.Request.URL)
		case *runtime.EventExceptionThrown:
			b.problems = append(b.problems, fmt.Sprintf("exception: %s at %s:%d", ev.ExceptionDetails.Text, ev.ExceptionDetails.URL, ev.ExceptionDetails.LineNumber+1))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				b.problems = append(b.problems, fmt.Sprintf("console.%s: %v", ev.Type, ev.Args))
			}
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError || ev.Entry.Level == cdplog.EntryLevelWarning {
				b.problems = append(b.problems, fmt.Sprintf("log %s (%s): %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		}
	})
	if err != nil {
		// chromedp enables the network, log and runtime domains itself.
		t.Skipf("browser test skipped: Chromium at %s does not start: %v", path, err)
	}
	return b
}

// open loads a page from a file:// URL and waits for its script to run.
func (b *browser) open(t *testing.T, file string) string {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	return b.openURL(t, (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String())
}

func (b *browser) openURL(t *testing.T, u string) string {
	t.Helper()
	b.mu.Lock()
	b.requests, b.problems = nil, nil
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS(`html[data-ready="1"]`))); err != nil {
		t.Fatalf("opening %s: %v (its script did not run: blocked by the CSP?)", u, err)
	}
	return u
}

func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// settle waits for late events, then checks that no request left the page
// and that nothing was logged as an error.
func (b *browser) settle(t *testing.T, page string) {
	t.Helper()
	chromedp.Do(b.ctx, chromedp.Sleep(300*time.Millisecond))
	b.mu.Lock()
	defer b.mu.Unlock()
	page, _, _ = strings.Cut(page, "#")
	for _, r := range b.requests {
		if r, _, _ := strings.Cut(r, "#"); r != page {
			t.Errorf("the page made a request: %s", r)
		}
	}
	for _, p := range b.problems {
		t.Errorf("the page logged: %s", p)
	}
}

// TestViewInBrowser opens the pages of the demo rollout and of a hostile one
// in headless Chromium: the timeline, the findings and the chart render, no
// request leaves the page, no error is logged, and none of the scripts
// injected into the rollout runs.
func TestViewInBrowser(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	write := func(name, in string) string {
		out := filepath.Join(dir, name)
		io, _, stderr := testIO("")
		if code := run([]string{"view", "-o", out, in}, io); code != exitOK {
			t.Fatalf("rollout view %s: exit %d: %s", in, code, stderr)
		}
		return out
	}

	page := b.open(t, write("demo.html", demoRollout))
	n := eval[int](t, b, `document.querySelectorAll('#timeline article.rec:not(.minor)').length`)
	if n < 10 {
		t.Errorf("timeline shows %d records, want the demo's 10 or more", n)
	}
	n = eval[int](t, b, `[...document.querySelectorAll('#timeline article.rec')].filter(e => e.offsetHeight > 0).length`)
	if n < 10 {
		t.Errorf("%d timeline records have a height on screen", n)
	}
	n = eval[int](t, b, `document.querySelectorAll('#finding-list tbody tr').length`)
	if n != 3 {
		t.Errorf("finding list has %d rows, want 3", n)
	}
	n = eval[int](t, b, `document.querySelectorAll('#timeline .finding').length`)
	if n != 3 {
		t.Errorf("%d findings shown at their records, want 3", n)
	}
	h := eval[float64](t, b, `document.querySelector('#fill svg').getBoundingClientRect().height`)
	if h < 100 {
		t.Errorf("chart is %.0f px high", h)
	}
	hidden := eval[bool](t, b, `(() => { const e = document.querySelector('#timeline article.minor:not(.has-finding)'); return e.offsetHeight === 0; })()`)
	if !hidden {
		t.Errorf("bookkeeping records show before their checkbox is ticked")
	}
	// Following a finding link lands on the finding.
	target := eval[string](t, b, `(() => { document.querySelector('#finding-list a').click(); return location.hash; })()`)
	if target != "#F1" {
		t.Errorf("first finding link goes to %q", target)
	}
	b.settle(t, page)

	page = b.open(t, write("hostile.html", hostileRollout))
	pwned := eval[string](t, b, `typeof window.__pwned`)
	if pwned != "undefined" {
		v := eval[any](t, b, `window.__pwned`)
		t.Errorf("a script from the rollout ran: window.__pwned = %v", v)
	}
	n = eval[int](t, b, `document.scripts.length`)
	if n != 1 {
		t.Errorf("the page has %d scripts, want its own only", n)
	}
	// A collapsed output opens when a link points into it.
	eval[bool](t, b, `(() => { const d = document.querySelector('#L6 details'); d.id = 'probe'; location.hash = '#probe'; return true; })()`)
	chromedp.Do(b.ctx, chromedp.Sleep(100*time.Millisecond))
	open := eval[bool](t, b, `document.querySelector('#L6 details').open`)
	if !open {
		t.Errorf("following a link into a collapsed section does not open it")
	}
	b.settle(t, page)

	// The verify report, with the demo's view written beside the rollout:
	// a finding's link opens the view at its line.
	rdir := t.TempDir()
	data, err := os.ReadFile(demoRollout)
	if err != nil {
		t.Fatal(err)
	}
	rollout := filepath.Join(rdir, "rollout-demo.jsonl")
	if err := os.WriteFile(rollout, data, 0o644); err != nil {
		t.Fatal(err)
	}
	io, _, stderr := testIO("")
	if code := run([]string{"view", rollout}, io); code != exitOK {
		t.Fatalf("rollout view: exit %d: %s", code, stderr)
	}
	io, _, stderr = testIO("")
	report := filepath.Join(rdir, "report.html")
	if code := run([]string{"verify", "--format", "html=" + report, rollout}, io); code != exitFindings {
		t.Fatalf("rollout verify: exit %d: %s", code, stderr)
	}
	page = b.open(t, report)
	if n := eval[int](t, b, `document.querySelectorAll('table.findings tbody tr').length`); n != 3 {
		t.Errorf("report lists %d findings, want 3", n)
	}
	if n := eval[int](t, b, `document.querySelectorAll('#rule-counts tbody tr').length`); n != 3 {
		t.Errorf("report counts %d rules, want 3", n)
	}
	href := eval[string](t, b, `document.querySelector('table.findings a').href`)
	b.settle(t, page)
	if !strings.HasSuffix(href, "/rollout-demo.view.html#L9") {
		t.Fatalf("first finding links to %s, want the view at line 9", href)
	}
	page = b.openURL(t, href)
	if id := eval[string](t, b, `document.querySelector(':target').id`); id != "L9" {
		t.Errorf("the view opened at %q, want L9", id)
	}
	b.settle(t, page)
}
