package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/rollout-dev/rollout/internal/output/view"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden outlines of testdata/view")

const (
	demoRollout    = "../../fixtures/demo/rollout-2026-03-10T09-35-30-019cd719-fabd-7808-8020-00009e3779b2.jsonl"
	hostileRollout = "../../internal/output/view/testdata/hostile.jsonl"
)

// viewPage runs `rollout view -o - ARGS...` in process and parses the page.
func viewPage(t *testing.T, args ...string) (*html.Node, []byte) {
	t.Helper()
	io, stdout, stderr := testIO("")
	if code := run(append([]string{"view", "-o", "-"}, args...), io); code != exitOK {
		t.Fatalf("rollout view %v: exit %d: %s", args, code, stderr)
	}
	doc, err := html.Parse(bytes.NewReader(stdout.Bytes()))
	if err != nil {
		t.Fatalf("parsing the page: %v", err)
	}
	return doc, stdout.Bytes()
}

// TestViewOutline compares the structure of pages, as an outline of the
// parsed HTML (header facts, finding list, chart, turns, records with their
// state and findings), with the goldens in testdata/view.
func TestViewOutline(t *testing.T) {
	t.Parallel()
	for name, path := range map[string]string{
		"demo":      demoRollout,
		"hostile":   hostileRollout,
		"paginated": "../../fixtures/clean/envelope-paginated.jsonl",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			doc, _ := viewPage(t, path)
			got := outline(doc)
			golden := filepath.Join("testdata", "view", name+".outline")
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestViewOutline -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("outline of %s differs from %s (-want +got):\n%s", path, golden, diff)
			}
		})
	}
}

// outline renders what a reader of the page sees, one line per element
// that carries meaning.
func outline(doc *html.Node) string {
	var b strings.Builder
	walk(doc, func(n *html.Node) bool {
		switch {
		case n.Data == "title":
			fmt.Fprintf(&b, "title: %s\n", text(n))
		case n.Data == "dt":
			fmt.Fprintf(&b, "fact %s: %s\n", text(n), text(next(n, "dd")))
		case n.Data == "tr" && ancestorID(n) == "finding-list" && find(n, "td") != nil:
			var cells []string
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode {
					cells = append(cells, text(c))
				}
			}
			fmt.Fprintf(&b, "finding-row %s -> %s\n", strings.Join(cells, " | "), attr(find(n, "a"), "href"))
		case n.Data == "li" && ancestorID(n) == "input-items":
			line := attr(find(n, "a"), "href")
			made := ""
			if s := find(n, "span"); s != nil {
				made = " (" + text(s) + ")"
			}
			fmt.Fprintf(&b, "input %s %s%s\n", text(find(n, "b")), line, made)
			return false
		case n.Data == "svg":
			fmt.Fprintf(&b, "chart svg viewBox=%s\n", attr(n, "viewBox"))
			return false
		case n.Data == "section" && hasClass(n, "turn"):
			fmt.Fprintf(&b, "turn %s class=%q: %s\n", attr(n, "id"), attr(n, "class"), text(find(n, "h3")))
		case n.Data == "article":
			depth := 1
			for p := n.Parent; p != nil; p = p.Parent {
				if p.Data == "article" {
					depth++
				}
			}
			hd := find(n, "div")
			fmt.Fprintf(&b, "%srec %s class=%q: %s\n", strings.Repeat("  ", depth), attr(n, "id"), attr(n, "class"), text(hd))
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				switch {
				case hasClass(c, "gone-note"):
					fmt.Fprintf(&b, "%s  gone: %s\n", strings.Repeat("  ", depth), text(c))
				case hasClass(c, "finding"):
					fmt.Fprintf(&b, "%s  finding %s: %s\n", strings.Repeat("  ", depth), attr(c, "id"), text(c))
				case c.Data == "details" || c.Data == "pre" || hasClass(c, "text"):
					fmt.Fprintf(&b, "%s  %s: %d bytes of text\n", strings.Repeat("  ", depth), c.Data, len(text(c)))
				}
			}
		}
		return true
	})
	return b.String()
}

func walk(n *html.Node, f func(*html.Node) bool) {
	if n.Type == html.ElementNode && !f(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func find(n *html.Node, tag string) *html.Node {
	var out *html.Node
	walk(n, func(c *html.Node) bool {
		if out == nil && c != n && c.Data == tag {
			out = c
		}
		return out == nil
	})
	return out
}

func next(n *html.Node, tag string) *html.Node {
	for s := n.NextSibling; s != nil; s = s.NextSibling {
		if s.Type == html.ElementNode && s.Data == tag {
			return s
		}
	}
	return nil
}

func text(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
		case html.ElementNode:
			b.WriteByte(' ') // element boundaries separate words
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

func attr(n *html.Node, key string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	return n.Type == html.ElementNode && strings.Contains(" "+attr(n, "class")+" ", " "+class+" ")
}

func ancestorID(n *html.Node) string {
	for p := n.Parent; p != nil; p = p.Parent {
		if id := attr(p, "id"); id != "" {
			return id
		}
	}
	return ""
}

// TestViewEscapesEverything opens a rollout full of HTML, scripts,
// event handlers and javascript: links: the page holds exactly one script
// (its own, allowed by hash in the CSP), no element or attribute that could
// load or run anything, and the hostile strings as plain text.
func TestViewEscapesEverything(t *testing.T) {
	t.Parallel()
	doc, raw := viewPage(t, hostileRollout)
	var scripts []string
	var csp string
	walk(doc, func(n *html.Node) bool {
		switch n.Data {
		case "script":
			scripts = append(scripts, text(n))
		case "meta":
			if attr(n, "http-equiv") == "Content-Security-Policy" {
				csp = attr(n, "content")
			}
		case "iframe", "img", "object", "embed", "link", "base", "form", "image", "use":
			t.Errorf("page holds a <%s> element", n.Data)
		}
		for _, a := range n.Attr {
			v := strings.ToLower(strings.TrimSpace(a.Val))
			if strings.HasPrefix(a.Key, "on") || a.Key == "src" || a.Key == "srcdoc" || a.Key == "action" {
				t.Errorf("<%s> has attribute %s=%q", n.Data, a.Key, a.Val)
			}
			if (a.Key == "href" || a.Key == "xlink:href") && !strings.HasPrefix(v, "#") {
				t.Errorf("<%s> links outside the page: %s=%q", n.Data, a.Key, a.Val)
			}
		}
		return true
	})
	if len(scripts) != 1 {
		t.Fatalf("page has %d scripts, want 1 (its own)", len(scripts))
	}
	var script string
	walk(doc, func(n *html.Node) bool {
		if n.Data == "script" && n.FirstChild != nil {
			script = n.FirstChild.Data
		}
		return true
	})
	sum := sha256.Sum256([]byte(script))
	hash := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	for _, want := range []string{"default-src 'none'", "script-src " + hash} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	body := text(doc)
	for i := 1; i <= 10; i++ {
		if i == 3 {
			continue // only in an attribute of the injected <a>, shown as text too
		}
		if !strings.Contains(body, fmt.Sprintf("window.__pwned=%d", i)) {
			t.Errorf("injected script %d is not shown as text", i)
		}
	}
	if !strings.Contains(body, `<a href="javascript:window.__pwned=3">`) {
		t.Errorf("injected javascript: link is not shown as text")
	}
	if bytes.Contains(raw, []byte("https://example.com/tracker.png")) {
		t.Errorf("the page holds an image URL from the rollout; images must show as their size only")
	}
}

// TestViewClipsLongStrings: strings over --max-text are cut and say their
// full size.
func TestViewClipsLongStrings(t *testing.T) {
	t.Parallel()
	doc, raw := viewPage(t, "--max-text", "200", hostileRollout)
	if !strings.Contains(text(doc), "cut at 200 B of 14.4 kB") {
		t.Errorf("the long tool output is not cut at 200 bytes with its size")
	}
	walk(doc, func(n *html.Node) bool {
		if n.Data == "pre" && len(text(n)) > 200 {
			t.Errorf("a <pre> holds %d bytes of text with --max-text 200", len(text(n)))
		}
		return true
	})
	_, full := viewPage(t, hostileRollout)
	if len(raw) >= len(full) {
		t.Errorf("--max-text 200 gave a page of %d bytes, the default %d", len(raw), len(full))
	}
}

func TestViewFlags(t *testing.T) {
	t.Parallel()
	parse := func(args ...string) (*viewOptions, int) {
		io, _, _ := testIO("")
		var got *viewOptions
		cmd := newRootCmd(&app{io: io}, "")
		for _, c := range cmd.Commands() {
			if c.Name() == "view" {
				cmd.RemoveCommand(c)
			}
		}
		cmd.AddCommand(newViewCmd(&app{io: io}, func(_ context.Context, o *viewOptions) error { got = o; return nil }))
		cmd.SetArgs(append([]string{"view"}, args...))
		cmd.SetOut(io.Out)
		cmd.SetErr(io.Err)
		if err := cmd.Execute(); err != nil {
			return nil, exitUsage
		}
		return got, exitOK
	}
	tests := []struct {
		args []string
		want *viewOptions
	}{
		{[]string{"a/rollout-x.jsonl"}, &viewOptions{path: "a/rollout-x.jsonl", output: "a/rollout-x.view.html"}},
		{[]string{"a/rollout-x.jsonl.zst"}, &viewOptions{path: "a/rollout-x.jsonl.zst", output: "a/rollout-x.view.html"}},
		{[]string{"-"}, &viewOptions{path: "-", output: "-"}},
		{[]string{"-o", "out.html", "x.jsonl"}, &viewOptions{path: "x.jsonl", output: "out.html"}},
		{[]string{"--max-text", "10", "x.jsonl"}, nil},
		{[]string{}, nil},
	}
	for _, tt := range tests {
		got, code := parse(tt.args...)
		if tt.want == nil {
			if code == exitOK {
				t.Errorf("view %v: accepted, want a usage error", tt.args)
			}
			continue
		}
		if got == nil {
			t.Errorf("view %v: rejected", tt.args)
			continue
		}
		if got.path != tt.want.path || got.output != tt.want.output {
			t.Errorf("view %v: path %q output %q, want %q %q", tt.args, got.path, got.output, tt.want.path, tt.want.output)
		}
		if got.maxText != view.DefaultMaxText && !strings.Contains(strings.Join(tt.args, " "), "--max-text") {
			t.Errorf("view %v: max text %d", tt.args, got.maxText)
		}
	}
}

// TestViewRefusesItsInput: -o naming the input is refused and the input
// stays as it was.
func TestViewRefusesItsInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "r.jsonl")
	data, err := os.ReadFile(demoRollout)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	io, _, stderr := testIO("")
	if code := run([]string{"view", "-o", in, in}, io); code != exitUsage {
		t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, stderr)
	}
	if got, _ := os.ReadFile(in); !bytes.Equal(got, data) {
		t.Errorf("the input changed")
	}
	io, stdout, stderr := testIO("")
	if code := run([]string{"view", in}, io); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.view.html")); err != nil {
		t.Errorf("no page beside the input: %v (stdout %q)", err, stdout)
	}
}

// TestViewPageLinearInWorldStatePatches: 5,000 patches that each add a
// member used to show the whole merged state at every patch, so the page
// (and the time to make it) grew with the square of the patches: 53x the
// rollout here. The state is shown once per run of patches, within a
// budget, and the page stays within 20x the rollout.
func TestViewPageLinearInWorldStatePatches(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "patches.jsonl")
	var b strings.Builder
	b.WriteString(`{"timestamp":"2026-03-10T09:35:30.037Z","ordinal":0,"type":"session_meta","payload":{"id":"019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90","cli_version":"0.147.0","history_mode":"paginated"}}` + "\n")
	b.WriteString(`{"timestamp":"2026-03-10T09:35:30.148Z","ordinal":1,"type":"world_state","payload":{"full":true,"state":{"environment":{"cwd":"/w"}}}}` + "\n")
	for i := range 5000 {
		fmt.Fprintf(&b, `{"timestamp":"2026-03-10T09:35:31.000Z","ordinal":%d,"type":"world_state","payload":{"full":false,"state":{"environment":{"k%d":"value %d"}}}}`+"\n", i+2, i, i)
	}
	os.WriteFile(in, []byte(b.String()), 0o644)
	out := filepath.Join(dir, "page.html")
	if code, o, e := runRollout("view", "-o", out, in); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, o, e)
	}
	page := filetest.Read(t, out)
	if ratio := float64(len(page)) / float64(b.Len()); ratio > 20 {
		t.Errorf("the page is %.1fx the rollout (%d bytes for %d)", ratio, len(page), b.Len())
	}
	if n := bytes.Count(page, []byte("merged state after this line")); n != 1 {
		t.Errorf("the merged state is shown %d times for one run of patches", n)
	}
	if !bytes.Contains(page, []byte("the 5000 patches from line 3 on")) {
		t.Error("the run's merged state does not say which patches it follows")
	}
}
