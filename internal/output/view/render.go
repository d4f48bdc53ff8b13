package view

import (
	"bytes"
	"html/template"
	"io"
	"sync"

	"github.com/rollout-dev/rollout/internal/output/htmlpage"
)

// Shown is the size of the text the page holds.
func (b Block) Shown() int64 { return int64(len(b.Text)) }

// page is parsed on first use: every command starts, only view renders.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(htmlpage.Funcs()).Funcs(template.FuncMap{
		"svg": inlineSVG,
	}).Parse(htmlpage.Head + pageTemplate))
})

// Render writes the page.
func Render(w io.Writer, p *Page) error {
	return page().Execute(w, p)
}

// inlineSVG drops the XML prolog of a generated chart so that it can sit
// inside the page. The chart is ours (numbers, and text the plotting
// library escapes), never bytes from the rollout.
func inlineSVG(svg []byte) template.HTML {
	if i := bytes.Index(svg, []byte("<svg")); i >= 0 {
		svg = svg[i:]
	}
	return template.HTML(svg)
}

const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>{{template "head"}}
<title>rollout view: {{base .Path}}</title>
</head>
<body>
<header class="top">
<h1>{{.Path}}</h1>
<dl class="facts" id="facts">
<dt>thread</dt><dd class="mono">{{or .ThreadID "(none)"}}</dd>
<dt>Codex version</dt><dd>{{or .CLIVersion "(unknown)"}}</dd>
<dt>era</dt><dd>{{.Era}}</dd>
<dt>history mode</dt><dd>{{or .HistoryMode "(unknown)"}}</dd>
<dt>window lineage</dt><dd class="mono">{{if or .FirstWindowID .WindowID}}first {{or .FirstWindowID "?"}} · current {{or .WindowID "?"}} · {{end}}window number {{.WindowNumber}}</dd>
<dt>file</dt><dd>{{.Records}} lines{{if .Bytes}}, {{bytes .Bytes}}{{end}}</dd>
<dt>resumed history</dt><dd>{{.Live}} items{{if .Inherited}} ({{.Inherited}} inherited, not shown){{end}}; {{.Gone}} more shown below are not in it</dd>
{{range .Inherits}}<dt>continues</dt><dd class="mono">rollout {{.RolloutID}} up to byte {{.EndOffset}}: {{.Items}} items ({{.Path}})</dd>
{{end}}
<dt>verify</dt><dd class="summary" id="summary"><span class="sev-error">{{.Errors}} errors</span><span class="sev-warning">{{.Warnings}} warnings</span><span class="sev-info">{{.Infos}} infos</span> <a href="#findings">findings</a> · <a href="#fill">context fill</a> · <a href="#input">what Codex sends</a> · <a href="#timeline">timeline</a></dd>
</dl>
{{if .Clipped}}<p class="trunc">{{.Clipped}} long strings are cut in this page; each shows its full size.</p>{{end}}
{{if .NotShown}}<p class="trunc" id="not-shown">The page stops after {{.Shown}} records: {{.NotShown}} later records are not shown (their findings are listed above).</p>{{end}}
</header>
<main>
<section id="findings">
<h2>Findings</h2>
{{if .Findings}}<table id="finding-list">
<thead><tr><th>line</th><th>severity</th><th>rule</th><th>message</th><th>repair</th></tr></thead>
<tbody>{{range .Findings}}<tr><td><a href="#F{{.N}}">{{.Line}}</a></td><td class="sev sev-{{.Severity}}">{{.Severity}}</td><td><code>{{.Rule}}</code></td><td>{{.Message}}</td><td>{{if .Fix}}planned{{else if .Fixable}}left{{else}}-{{end}}</td></tr>
{{end}}</tbody></table>
<details><summary>by rule</summary><table>{{range .ByRule}}<tr><td><code>{{.Rule}}</code></td><td class="sev sev-{{.Severity}}">{{.Severity}}</td><td>{{.Count}}</td></tr>{{end}}</table></details>
{{else}}<p>No findings.</p>{{end}}
{{range .Unplaced}}{{template "finding" .}}{{end}}
</section>
<section id="fill" class="chart">
<h2>Context fill per request</h2>
{{with .ChartSVG}}{{svg .}}{{end}}
{{with .ChartNote}}<p class="trunc">{{.}}</p>{{end}}
</section>
<section id="input">
<h2>What Codex sends on resume</h2>
{{with .InputNote}}<p class="trunc">{{.}}</p>{{else}}<p class="trunc">The {{len .Input}} input items Codex {{or .ResumeVersion "(unknown version)"}} rebuilds from the rollout, in order, each as it sends them (<code>rollout state --items</code>). Newer versions put the base instructions before them; the new turn follows them.</p>
<ol id="input-items">{{range .Input}}<li><b>{{.Title}}</b>{{if .Line}} <a href="#L{{.Line}}">line {{.Line}}</a>{{end}}{{with .Made}} <span class="gone-note">{{.}}</span>{{end}}{{template "block" .Block}}</li>
{{end}}</ol>{{end}}
</section>
<section>
<h2>Timeline</h2>
<p class="trunc">The thread as resume rebuilds it, turn by turn. Records that resume drops (rolled back) or replaces (compacted) stay here, struck through.</p>
<input type="checkbox" id="show-minor"><label for="show-minor">show bookkeeping records (token counts, turn context, event copies)</label>
<input type="checkbox" id="hide-gone"><label for="hide-gone">hide records not in the resumed history</label>
<div id="timeline">
{{range .Turns}}<section class="turn{{if .RolledBack}} rolled-back{{end}}" id="T{{.Index}}">
<h3>{{if .Index}}turn {{.Index}} · <span class="mono">{{or .ID "(no id)"}}</span> · line {{.Line}} · {{.Status}}{{else}}before the first turn{{end}}</h3>
{{range .Records}}{{template "rec" .}}{{end}}
</section>
{{end}}</div>
</section>
</main>
{{template "script"}}
</body>
</html>
{{define "rec"}}<article class="rec {{.Kind}}{{if .Minor}} minor{{end}}{{if .Gone}} gone{{end}}{{if .Findings}} has-finding{{end}}"{{if .Anchor}} id="L{{.Line}}"{{end}} data-line="{{.Line}}">
<div class="hd"><span class="kind">{{.Title}}</span>{{with .Meta}}<span class="mono trunc">{{.}}</span>{{end}}<a class="ln" href="#L{{.Line}}">line {{.Line}}</a></div>
{{with .Gone}}<div class="gone-note">not in the resumed history: {{.}}</div>{{end}}
{{range .Findings}}{{template "finding" .}}{{end}}
{{range .Blocks}}{{template "block" .}}{{end}}
{{with .Items}}<details><summary>replacement history: {{len .}} items{{with $.More}} (and {{.}} more not listed){{end}}</summary><ol>{{range .}}<li{{if .Gone}} class="gone"{{end}}><b>{{.Title}}</b> {{.Text}}{{if .Gone}} <span class="gone-note">(not in the resumed history)</span>{{end}}</li>{{end}}</ol></details>{{end}}
{{with .Output}}<div class="output">{{template "rec" .}}</div>{{end}}
</article>
{{end}}
{{define "finding"}}<div class="finding sev-{{.Severity}}" id="F{{.N}}"><span class="sev sev-{{.Severity}}">{{.Severity}}</span> <code>{{.Rule}}</code> {{.Message}}
{{if .Fix}}<div class="fix">repair would: {{range .Fix}}<code>{{.}}</code> {{end}}</div>{{else if .FixNote}}<div class="fix">repair: {{.FixNote}}</div>{{end}}</div>
{{end}}
{{define "block"}}{{if .Collapsed}}<details><summary>{{or .Label "text"}} · {{bytes .Size}}</summary>{{template "body" .}}</details>{{else}}{{with .Label}}<div class="trunc">{{.}}</div>{{end}}{{template "body" .}}{{end}}{{end}}
{{define "body"}}{{if .Code}}<pre>{{.Text}}</pre>{{else}}<div class="text">{{.Text}}</div>{{end}}{{if .Clipped}}<div class="trunc">cut at {{bytes .Shown}} of {{bytes .Size}}</div>{{end}}{{end}}
`
