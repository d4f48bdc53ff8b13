package report

import (
	"bufio"
	"html/template"
	"io"
	"net/url"
	"path/filepath"
	"sync"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/output/htmlpage"
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
	*result.FileResult
	Index      int
	File, View string
}

type htmlRule struct {
	Rule     string
	Severity checks.Severity
	Count    int
}

type htmlPage struct {
	Version string
	Summary result.Summary
	ByRule  []htmlRule
}

// htmlStream writes one self-contained page: the summary, the counts by
// rule, and per file its findings, each linking to the rollout and, where
// `rollout view` wrote a page beside it, to the finding's line in that page.
// The summary comes first: the files' sections are spooled until Close.
type htmlStream struct {
	w     io.Writer
	o     Options
	files spool
	n     int
}

func newHTMLStream(w io.Writer, o Options) formatStream { return &htmlStream{w: w, o: o} }

func (s *htmlStream) file(f *result.FileResult, _ *result.Tally) error {
	hf := htmlFile{FileResult: f, Index: s.n}
	s.n++
	if s.o.Links.File != nil {
		hf.File = s.o.Links.File(f.Path)
	}
	if s.o.Links.View != nil {
		hf.View = s.o.Links.View(f.Path)
	}
	return htmlReport().ExecuteTemplate(&s.files, "file", hf)
}

func (s *htmlStream) finish(r *result.Report, t *result.Tally) error {
	pg := htmlPage{Version: r.Version, Summary: t.Summary(r)}
	for _, id := range t.RuleIDs() {
		pg.ByRule = append(pg.ByRule, htmlRule{Rule: id, Severity: t.FirstSeverity(id), Count: t.Findings(id)})
	}
	bw := bufio.NewWriterSize(s.w, 64<<10)
	// The page's top is the template itself (with what htmlpage.Head leaves
	// outside its definitions), its files and bottom are definitions.
	if err := htmlReport().Execute(bw, pg); err != nil {
		return err
	}
	if err := s.files.copyTo(bw); err != nil {
		return err
	}
	if err := htmlReport().ExecuteTemplate(bw, "bottom", pg); err != nil {
		return err
	}
	return bw.Flush()
}

func (s *htmlStream) release() { s.files.release() }

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

// htmlReport is parsed on first use: every command starts, few write HTML.
var htmlReport = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(htmlpage.Funcs()).Parse(htmlpage.Head + `<!DOCTYPE html>
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
{{define "file"}}{{$f := .}}<section class="file" id="file-{{.Index}}">
<h3>{{if .File}}<a href="{{.File}}">{{.Path}}</a>{{else}}{{.Path}}{{end}}{{if .View}} · <a href="{{.View}}">view</a>{{end}}</h3>
<p class="trunc">{{.Records}} records{{with .Era}} · {{.}}{{end}}{{with .HistoryMode}} · {{.}}{{end}}{{with .CLIVersion}} · Codex {{.}}{{end}}{{with .ThreadID}} · thread <span class="mono">{{.}}</span>{{end}}</p>
{{with .Error}}<p class="finding sev-error"><span class="sev sev-error">not analysed</span> <code>{{.Code}}</code> {{.Message}}</p>{{end}}
{{if .Findings}}<table class="findings"><thead><tr><th>line</th><th>severity</th><th>rule</th><th>message</th></tr></thead>
<tbody>{{range .Findings}}<tr><td>{{if $f.View}}<a href="{{$f.View}}#L{{.Line}}">{{.Line}}</a>{{else if $f.File}}<a href="{{$f.File}}">{{.Line}}</a>{{else}}{{.Line}}{{end}}</td><td class="sev sev-{{.Severity}}">{{.Severity}}</td><td><code>{{.Rule}}</code></td><td>{{.Message}}</td></tr>
{{end}}</tbody></table>{{else if not .Error}}<p>No findings.</p>{{end}}
</section>
{{end}}{{define "bottom"}}</section>
</main>
{{template "script"}}
</body>
</html>
{{end}}`))
})
