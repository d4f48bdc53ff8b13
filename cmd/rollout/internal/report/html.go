package report

import (
	"html/template"
	"io"
	"net/url"
	"path/filepath"
	"sort"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/cmd/rollout/internal/htmlpage"
)

// Links say where the HTML report's links go. Paths are relative to the
// report's directory, as the command computes them.
type Links struct {
	// File is the link to a rollout ("" for none, e.g. standard input).
	File func(path string) string
	// View is the page `rollout view` wrote beside a rollout, or "".
	View func(path string) string
}

type htmlFile struct {
	FileResult
	File, View string
}

type htmlRule struct {
	Rule     string
	Severity checks.Severity
	Count    int
}

type htmlPage struct {
	Version string
	Summary Summary
	ByRule  []htmlRule
	Files   []htmlFile
}

// printHTML writes one self-contained page: the summary, the counts by
// rule, and per file its findings, each linking to the rollout and, where
// `rollout view` wrote a page beside it, to the finding's line in that page.
func printHTML(w io.Writer, r *Report, o Options) error {
	pg := htmlPage{Version: r.Version, Summary: r.Summary()}
	counts := map[string]*htmlRule{}
	for _, f := range r.Files {
		hf := htmlFile{FileResult: f}
		if o.Links.File != nil {
			hf.File = o.Links.File(f.Path)
		}
		if o.Links.View != nil {
			hf.View = o.Links.View(f.Path)
		}
		pg.Files = append(pg.Files, hf)
		for _, fd := range f.Findings {
			c := counts[fd.Rule]
			if c == nil {
				c = &htmlRule{Rule: fd.Rule, Severity: fd.Severity}
				counts[fd.Rule] = c
			}
			c.Count++
		}
	}
	for _, c := range counts {
		pg.ByRule = append(pg.ByRule, *c)
	}
	sort.Slice(pg.ByRule, func(i, j int) bool { return pg.ByRule[i].Rule < pg.ByRule[j].Rule })
	return htmlReport.Execute(w, pg)
}

// RelativeLink is the link from a page in dir to path, safe for an href:
// a colon in the first segment cannot be read as a URL scheme.
func RelativeLink(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		abs, aerr := filepath.Abs(path)
		if aerr != nil {
			return ""
		}
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	}
	return (&url.URL{Path: filepath.ToSlash(rel)}).String()
}

var htmlReport = template.Must(template.New("report").Funcs(htmlpage.Funcs()).Parse(htmlpage.Head + `<!DOCTYPE html>
<html lang="en">
<head>{{template "head"}}
<title>rollout verify: {{.Summary.Files}} files</title>
</head>
<body>
<header class="top">
<h1>rollout verify</h1>
<dl class="facts" id="facts">
<dt>files</dt><dd>{{.Summary.Files}}{{with .Summary.NotAnalysed}} ({{.}} not analysed){{end}}</dd>
<dt>records</dt><dd>{{.Summary.Records}}</dd>
<dt>findings</dt><dd class="summary" id="summary"><span class="sev-error">{{.Summary.Errors}} errors</span><span class="sev-warning">{{.Summary.Warnings}} warnings</span><span class="sev-info">{{.Summary.Infos}} infos</span></dd>
<dt>rollout</dt><dd>{{.Version}}</dd>
</dl>
</header>
<main>
<section id="rules">
<h2>Findings by rule</h2>
{{if .ByRule}}<table id="rule-counts"><thead><tr><th>rule</th><th>severity</th><th>findings</th></tr></thead>
<tbody>{{range .ByRule}}<tr><td><code>{{.Rule}}</code></td><td class="sev sev-{{.Severity}}">{{.Severity}}</td><td>{{.Count}}</td></tr>
{{end}}</tbody></table>{{else}}<p>No findings.</p>{{end}}
</section>
<section id="files">
<h2>Files</h2>
{{range $i, $f := .Files}}<section class="file" id="file-{{$i}}">
<h3>{{if .File}}<a href="{{.File}}">{{.Path}}</a>{{else}}{{.Path}}{{end}}{{if .View}} · <a href="{{.View}}">view</a>{{end}}</h3>
<p class="trunc">{{.Records}} records{{with .Era}} · {{.}}{{end}}{{with .HistoryMode}} · {{.}}{{end}}{{with .CLIVersion}} · Codex {{.}}{{end}}{{with .ThreadID}} · thread <span class="mono">{{.}}</span>{{end}}</p>
{{with .Error}}<p class="finding sev-error"><span class="sev sev-error">not analysed</span> <code>{{.Code}}</code> {{.Message}}</p>{{end}}
{{if .Findings}}<table class="findings"><thead><tr><th>line</th><th>severity</th><th>rule</th><th>message</th></tr></thead>
<tbody>{{range .Findings}}<tr><td>{{if $f.View}}<a href="{{$f.View}}#L{{.Line}}">{{.Line}}</a>{{else if $f.File}}<a href="{{$f.File}}">{{.Line}}</a>{{else}}{{.Line}}{{end}}</td><td class="sev sev-{{.Severity}}">{{.Severity}}</td><td><code>{{.Rule}}</code></td><td>{{.Message}}</td></tr>
{{end}}</tbody></table>{{else if not .Error}}<p>No findings.</p>{{end}}
</section>
{{end}}</section>
</main>
{{template "script"}}
</body>
</html>
`))
