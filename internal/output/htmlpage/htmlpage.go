// Package htmlpage is the shell shared by the HTML pages rollout writes
// (`rollout view` and `rollout verify --format html`): one stylesheet, one
// small inline script and the Content-Security-Policy that allows that
// script and nothing else. Pages are self-contained: no request leaves them,
// so they work from file:// and as CI artifacts. It belongs to the output
// stage (internal/output) and imports nothing of the module.
package htmlpage

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"path/filepath"
	"strings"
	"sync"
)

// Script is the page's only script: following a link to a record or a
// finding opens the collapsed sections around it. Everything else (the
// record filters) is CSS, so the page reads the same without scripts.
const Script = `(function () {
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    for (var p = el; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") { p.open = true; }
    }
    if (el) { el.scrollIntoView({block: "center"}); }
  }
  window.addEventListener("hashchange", reveal);
  reveal();
  document.documentElement.setAttribute("data-ready", "1");
})();`

// csp is the Content-Security-Policy of every page: no network at all, the
// inline script above by its hash, inline styles (the SVG chart carries
// style attributes), images only from data: URLs.
var csp = sync.OnceValue(func() string {
	return fmt.Sprintf("default-src 'none'; script-src '%s'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'", scriptHash())
})

func scriptHash() string {
	sum := sha256.Sum256([]byte(Script))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// Head is the <head> content shared by the pages; the caller's template
// supplies the <title>. It is a template fragment named "head".
const Head = `{{define "head"}}<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{csp}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<style>{{css}}</style>{{end}}
{{define "script"}}<script>{{script}}</script>{{end}}`

// Funcs are the template functions the shell and the pages use.
func Funcs() template.FuncMap {
	return template.FuncMap{
		"csp":    csp,
		"css":    func() template.CSS { return template.CSS(Style) },
		"script": func() template.JS { return template.JS(Script) },
		"bytes":  Bytes,
		"group":  Group,
		"base":   filepath.Base,
	}
}

// Bytes renders a size: "812 B", "12.4 kB", "5.0 MB".
func Bytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}

// Group renders an integer with thousands separators: 258,400.
func Group(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Style is the one stylesheet: readable in light and dark schemes, severity
// colours that also carry a word (never colour alone).
const Style = `
:root { --bg:#fff; --fg:#1b1f24; --muted:#59636e; --line:#d1d9e0; --card:#f6f8fa;
  --user:#0969da; --assistant:#1a7f37; --tool:#8250df; --sys:#9a6700; --err:#cf222e; --warn:#9a6700; --info:#0969da; --gone:#eef0f2; }
@media (prefers-color-scheme: dark) { :root { --bg:#0d1117; --fg:#e6edf3; --muted:#9198a1; --line:#3d444d;
  --card:#151b23; --user:#4493f8; --assistant:#3fb950; --tool:#ab7df8; --sys:#d29922; --err:#f85149; --warn:#d29922; --info:#4493f8; --gone:#1c2128; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
header.top { padding: 16px 24px; border-bottom: 1px solid var(--line); }
header.top h1 { font-size: 18px; margin: 0 0 8px; word-break: break-all; }
main { padding: 8px 24px 48px; max-width: 1200px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; word-break: break-all; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0; padding: 6px 8px; background: var(--bg); border: 1px solid var(--line); border-radius: 4px; max-height: 480px; overflow: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
a { color: var(--user); }
.sev { font-weight: 600; text-transform: uppercase; font-size: 11px; letter-spacing: .03em; }
.sev-error { color: var(--err); } .sev-warning { color: var(--warn); } .sev-info { color: var(--info); }
.summary span { margin-right: 16px; }
.turn { border-left: 3px solid var(--line); margin: 16px 0; padding-left: 12px; content-visibility: auto; contain-intrinsic-size: auto 800px; }
.turn > h3 { font-size: 14px; margin: 0 0 6px; color: var(--muted); font-weight: 600; }
.turn.rolled-back > h3::after { content: " (rolled back)"; color: var(--err); }
.rec { border: 1px solid var(--line); border-radius: 6px; background: var(--card); margin: 6px 0; padding: 6px 10px; }
.rec > .hd { display: flex; gap: 10px; align-items: baseline; flex-wrap: wrap; }
.rec .kind { font-weight: 600; }
.rec .ln { color: var(--muted); font-size: 12px; margin-left: auto; }
.rec.user { border-left: 4px solid var(--user); } .rec.assistant { border-left: 4px solid var(--assistant); }
.rec.tool, .rec.output { border-left: 4px solid var(--tool); } .rec.compaction, .rec.rollback { border-left: 4px solid var(--sys); }
.rec.world, .rec.handoff, .rec.agent { border-left: 4px solid var(--info); } .rec.broken { border-left: 4px solid var(--err); }
.rec .output { margin-top: 6px; }
.rec.minor { padding: 2px 10px; font-size: 12.5px; color: var(--muted); background: transparent; }
.rec.gone { background: var(--gone); opacity: .75; }
.rec.gone > .hd .kind { text-decoration: line-through; }
.gone-note { color: var(--err); font-size: 12px; }
.rec:target, .finding:target { outline: 2px solid var(--user); outline-offset: 2px; }
.finding { border-left: 3px solid var(--err); padding: 2px 8px; margin: 6px 0; background: var(--bg); }
.finding.sev-warning { border-color: var(--warn); } .finding.sev-info { border-color: var(--info); }
.finding .fix { color: var(--muted); }
.trunc { color: var(--muted); font-size: 12px; }
details > summary { cursor: pointer; color: var(--muted); }
.text { white-space: pre-wrap; word-break: break-word; }
.chart svg { max-width: 100%; height: auto; background: #fff; border: 1px solid var(--line); border-radius: 6px; }
section > label { margin-right: 16px; color: var(--muted); }
.rec.minor:not(.has-finding) { display: none; }
#show-minor:checked ~ #timeline .rec.minor { display: block; }
#hide-gone:checked ~ #timeline .rec.gone:not(.has-finding) { display: none; }
`
