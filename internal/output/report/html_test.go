package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/rollout-dev/rollout/internal/derive/result"
)

// TestHTML reads the HTML report as a browser would (parsed with an HTML5
// parser): the summary, the counts by rule, per file its findings linking
// to the file, or into the view beside it where there is one; every string
// from the report escaped.
func TestHTML(t *testing.T) {
	t.Parallel()
	r := sample()
	r.Files[0].Findings[0].Message = `<script>alert(1)</script><a href="javascript:alert(2)">x</a>`
	r.Files = append(r.Files, result.FileResult{Path: "odd/rollout-2026-03-10T09:35:30-x.jsonl", Records: 1,
		Error: &result.FileError{Code: "unreadable", Message: "a <b>bad</b> file"}})
	r.Normalize()
	o := testOptions
	o.Links = Links{
		File: func(p string) string { return RelativeLink("out", p) },
		View: func(p string) string {
			if strings.HasSuffix(p, "rollout-a.jsonl") {
				return RelativeLink("out", strings.TrimSuffix(p, ".jsonl")+".view.html")
			}
			return ""
		},
	}
	var buf bytes.Buffer
	printHTML, _ := lookup("html")
	if err := printHTML(&buf, r, o); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	scripts := 0
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script":
				scripts++
			case "h3":
				got = append(got, "file: "+textOf(n)+" "+attrs(n, "a", "href"))
			case "tr":
				got = append(got, "row: "+textOf(n)+" "+attrs(n, "a", "href"))
			case "dd":
				got = append(got, "fact: "+textOf(n))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	want := []string{
		"fact: 3 (1 not analysed)",
		"fact: 19",
		"fact: 1 errors 1 warnings 1 infos",
		"fact: 0.3.0-test",
		"row: rule severity findings ",
		"row: item/missing-id warning 1 ",
		"row: meta/old-cli info 1 ",
		"row: ordinal/gap error 1 ",
		"file: odd/rollout-2026-03-10T09:35:30-x.jsonl ../odd/rollout-2026-03-10T09:35:30-x.jsonl",
		"file: sessions/2025/rollout-a.jsonl · view ../sessions/2025/rollout-a.jsonl ../sessions/2025/rollout-a.view.html",
		"row: line severity rule message ",
		`row: 1 info meta/old-cli <script>alert(1)</script><a href="javascript:alert(2)">x</a> ../sessions/2025/rollout-a.view.html#L1`,
		"row: 3 error ordinal/gap ordinal jumps from 5 to 7 ../sessions/2025/rollout-a.view.html#L3",
		"row: 9 warning item/missing-id " + strings.Join(strings.Fields(trickyMessage), " ") + " ../sessions/2025/rollout-a.view.html#L9",
		"file: sessions/rollout-b.jsonl ../sessions/rollout-b.jsonl",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HTML report (-want +got):\n%s", diff)
	}
	if scripts != 1 {
		t.Errorf("%d scripts, want the page's own", scripts)
	}
	if !strings.Contains(textOf(doc), "not analysed unreadable a <b>bad</b> file") {
		t.Errorf("the file that was not analysed is not shown with its error")
	}
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		} else {
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// attrs lists the attribute key of the tag elements under n.
func attrs(n *html.Node, tag, key string) string {
	var out []string
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag {
			for _, a := range n.Attr {
				if a.Key == key {
					out = append(out, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return strings.Join(out, " ")
}

func TestRelativeLink(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ dir, path, want string }{
		{".", "a.jsonl", "a.jsonl"},
		{".", "rollout-2026-03-10T09:35:30.jsonl", "./rollout-2026-03-10T09:35:30.jsonl"}, // not a scheme
		{"out", "s/a b#c.jsonl", "../s/a%20b%23c.jsonl"},
		{"out", "javascript:alert(1)", "../javascript:alert%281%29"},
	} {
		if got := RelativeLink(tt.dir, tt.path); got != tt.want {
			t.Errorf("RelativeLink(%q, %q) = %q, want %q", tt.dir, tt.path, got, tt.want)
		}
	}
}
