package report

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
)

const (
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion = "2.1.0"
	// sarifInformationURI is the tool's home page, the repository of the
	// module github.com/rollout-dev/rollout.
	sarifInformationURI = "https://github.com/rollout-dev/rollout"
	// sarifHelpURI is the rule catalog; a rule's helpUri adds its anchor.
	// The main branch keeps every released rule's section (ids are never
	// reused), so the link stays valid for old reports.
	sarifHelpURI = sarifInformationURI + "/blob/main/docs/checks.md"
	// sarifFingerprintKey names the partial fingerprint; bump the suffix if
	// its recipe ever changes.
	sarifFingerprintKey = "rollout/v1"
)

// The subset of SARIF 2.1.0 that rollout writes. No timestamps, no command
// line: the log is a pure function of the report. The one invocation says
// whether every input was analysed (executionSuccessful) and carries a
// notification per file that was not (descriptor id: the result.FileError code)
// and per note.

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool sarifTool `json:"tool"`
	// OriginalURIBaseIDs says where %SRCROOT%, the base of the results'
	// relative URIs, is (Options.SourceRoot).
	OriginalURIBaseIDs map[string]sarifArtifactLocation `json:"originalUriBaseIds,omitempty"`
	Invocations        []sarifInvocation                `json:"invocations"`
	Results            []sarifResult                    `json:"results"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Level      string              `json:"level"`
	Message    sarifMessage        `json:"message"`
	Locations  []sarifLocation     `json:"locations,omitempty"`
	Descriptor *sarifDescriptorRef `json:"descriptor,omitempty"`
}

type sarifDescriptorRef struct {
	ID string `json:"id"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string             `json:"id"`
	Name                 string             `json:"name"`
	ShortDescription     sarifMessage       `json:"shortDescription"`
	FullDescription      sarifMessage       `json:"fullDescription"`
	Help                 *sarifHelp         `json:"help,omitempty"`    // registered rules only
	HelpURI              string             `json:"helpUri,omitempty"` // registered rules only
	DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
}

// sarifHelp is a multiformatMessageString: GitHub code scanning shows the
// markdown, other viewers the text.
type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"` // none for a whole-file finding
}

type sarifArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// sarifSourceRoot is the uriBaseId of paths relative to the source root,
// the name GitHub code scanning and other consumers resolve.
const sarifSourceRoot = "%SRCROOT%"

// location is the artifactLocation of a file: relative to %SRCROOT% when
// it is under the source root, else as sarifURI makes it.
func (s *sarifWriter) location(path string) sarifArtifactLocation {
	rel, ok := s.o.fromRoot(path)
	if !ok {
		return sarifArtifactLocation{URI: sarifURI(path)}
	}
	return sarifArtifactLocation{URI: (&url.URL{Path: rel}).String(), URIBaseID: sarifSourceRoot}
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// sarifPrinter returns the printer of a SARIF 2.1.0 log with one run, which
// describes rules with lookup (checks.Lookup; a parameter so that tests need
// not depend on the registry's contents).
func sarifPrinter(lookup func(id string) (*checks.Rule, bool)) Printer {
	return streamPrinter(sarifStream(lookup))
}

// sarifStream writes the log. The rules and the invocation (which files
// were not analysed) come before the results, and a result names its rule
// by index in rules[]: each file's findings are spooled (gob) until Close,
// then rendered as the document holds them.
//
// rules[] has one entry per rule id that appears in the findings, sorted by
// id. A registered rule gives its title, doc and severity; an unregistered
// one gets a generic title and, as default level, the highest severity of
// its findings. Each result's level is its finding's own severity.
func sarifStream(lookup func(id string) (*checks.Rule, bool)) func(io.Writer, Options) formatStream {
	return func(w io.Writer, o Options) formatStream {
		s := &sarifWriter{w: w, lookup: lookup, o: o}
		s.enc = gob.NewEncoder(&s.results)
		return s
	}
}

type sarifWriter struct {
	w       io.Writer
	o       Options
	lookup  func(id string) (*checks.Rule, bool)
	results spool
	enc     *gob.Encoder
	// notAnalysed are the files with an error, for the invocation.
	notAnalysed []result.FileResult
}

// sarifSpooled is what a result needs of a finding and its file.
type sarifSpooled struct {
	Path     string
	Rule     string
	Severity checks.Severity
	Line     int
	Message  string
}

func (s *sarifWriter) file(f *result.FileResult, _ *result.Tally) error {
	if f.Error != nil {
		s.notAnalysed = append(s.notAnalysed, result.FileResult{Path: f.Path, Error: f.Error})
	}
	for _, fd := range f.Findings {
		if err := s.enc.Encode(&sarifSpooled{f.Path, fd.Rule, fd.Severity, fd.Line, fd.Message}); err != nil {
			return fmt.Errorf("spooling the sarif report: %w", err)
		}
	}
	return nil
}

func (s *sarifWriter) release() { s.results.release() }

// sarifResultIndent is the indent of an element of "results".
const sarifResultIndent = "        "

func (s *sarifWriter) finish(r *result.Report, t *result.Tally) error {
	ids := t.RuleIDs()
	rules := make([]sarifRule, 0, len(ids))
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[id] = i
		sr := sarifRule{
			ID:                   id,
			Name:                 sarifRuleName(id),
			ShortDescription:     sarifMessage{Text: "rollout rule " + id},
			FullDescription:      sarifMessage{Text: "See `rollout explain " + id + "`."},
			DefaultConfiguration: sarifConfiguration{Level: sarifLevel(t.MaxSeverity(id))},
		}
		if rule, ok := s.lookup(id); ok && rule != nil {
			if rule.Title != "" {
				sr.ShortDescription.Text = rule.Title
			}
			sr.FullDescription.Text = cmp.Or(strings.TrimSpace(rule.Doc), sr.ShortDescription.Text)
			sr.DefaultConfiguration.Level = sarifLevel(rule.Severity)
			sr.Help = &sarifHelp{Text: rule.Explain(), Markdown: rule.ExplainMarkdown(sarifHelpURI)}
			sr.HelpURI = sarifHelpURI + "#" + checks.Anchor(rule.ID)
		}
		rules = append(rules, sr)
	}

	inv := sarifInvocation{ExecutionSuccessful: true, ToolExecutionNotifications: []sarifNotification{}}
	for _, f := range s.notAnalysed {
		inv.ExecutionSuccessful = false
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
			Level:      "error",
			Message:    sarifMessage{Text: f.Path + ": " + notAnalysed(f.Error)},
			Locations:  []sarifLocation{{PhysicalLocation: sarifPhysicalLocation{ArtifactLocation: s.location(f.Path)}}},
			Descriptor: &sarifDescriptorRef{ID: f.Error.Code},
		})
	}
	for _, n := range r.Notes {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
			Level: "note", Message: sarifMessage{Text: n}})
	}

	head := sarifLog{
		Schema:  sarifSchema,
		Version: sarifVersion,
		Runs: []sarifRun{{
			Tool: sarifTool{Driver: sarifDriver{
				Name:           cmp.Or(r.Tool, "rollout"),
				Version:        r.Version,
				InformationURI: sarifInformationURI,
				Rules:          rules,
			}},
			Invocations: []sarifInvocation{inv},
			Results:     []sarifResult{},
		}},
	}
	if root := s.o.SourceRoot; root != "" {
		head.Runs[0].OriginalURIBaseIDs = map[string]sarifArtifactLocation{
			sarifSourceRoot: {URI: strings.TrimSuffix(sarifURI(root), "/") + "/"}}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(head); err != nil {
		return fmt.Errorf("encode sarif report: %w", err)
	}
	if s.results.empty() {
		_, err := s.w.Write(buf.Bytes())
		return wrapWrite("sarif", err)
	}
	// The results, empty here, end the document.
	const noResults = "[]\n    }\n  ]\n}\n"
	bw := bufio.NewWriterSize(s.w, 64<<10)
	bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte(noResults)))
	bw.WriteString("[")
	if err := s.writeResults(bw, index); err != nil {
		return err
	}
	bw.WriteString("\n      ]\n    }\n  ]\n}\n")
	return wrapWrite("sarif", bw.Flush())
}

// writeResults renders the spooled findings as elements of "results".
func (s *sarifWriter) writeResults(w io.Writer, index map[string]int) error {
	in, err := s.results.reader()
	if err != nil {
		return wrapWrite("sarif", err)
	}
	dec := gob.NewDecoder(in)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(sarifResultIndent, "  ")
	sep := "\n" + sarifResultIndent
	path, loc0 := "", sarifArtifactLocation{}
	for {
		var fd sarifSpooled
		if err := dec.Decode(&fd); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading the spooled sarif report: %w", err)
		}
		if fd.Path != path || loc0.URI == "" {
			path, loc0 = fd.Path, s.location(fd.Path)
		}
		loc := sarifPhysicalLocation{ArtifactLocation: loc0}
		if fd.Line > 0 {
			loc.Region = &sarifRegion{StartLine: fd.Line}
		}
		buf.Reset()
		buf.WriteString(sep)
		sep = ",\n" + sarifResultIndent
		if err := enc.Encode(sarifResult{
			RuleID:              fd.Rule,
			RuleIndex:           index[fd.Rule],
			Level:               sarifLevel(fd.Severity),
			Message:             sarifMessage{Text: fd.Message},
			Locations:           []sarifLocation{{PhysicalLocation: loc}},
			PartialFingerprints: map[string]string{sarifFingerprintKey: sarifFingerprint(fd.Rule, fd.Path, fd.Line, fd.Message)},
		}); err != nil {
			return fmt.Errorf("encode sarif report: %w", err)
		}
		if _, err := w.Write(buf.Bytes()[:buf.Len()-1]); err != nil {
			return wrapWrite("sarif", err)
		}
	}
}

func sarifLevel(s checks.Severity) string {
	switch s {
	case checks.Error:
		return "error"
	case checks.Warning:
		return "warning"
	}
	return "note"
}

// sarifRuleName turns a rule id into the PascalCase identifier SARIF
// recommends for rule.name: "item/missing-id" becomes "ItemMissingId".
func sarifRuleName(id string) string {
	var b strings.Builder
	upper := true
	for _, c := range id {
		if c == '/' || c == '-' || c == '_' || c == '.' {
			upper = true
			continue
		}
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		upper = false
		b.WriteRune(c)
	}
	return b.String()
}

// sarifURI makes a path an artifactLocation URI: slash-separated and
// percent-escaped; a relative path stays relative (resolved against the
// repository root by code scanning), an absolute one becomes a file:// URI.
func sarifURI(path string) string {
	p := filepath.ToSlash(path)
	if filepath.IsAbs(path) {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p // C:/x -> /C:/x
		}
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}

// sarifFingerprint is the hex SHA-256 of rule, slash-separated path, line
// and message, each followed by a NUL byte. It does not depend on the byte
// offset, so a finding keeps its fingerprint when earlier lines grow.
func sarifFingerprint(rule, path string, line int, message string) string {
	h := sha256.New()
	for _, s := range []string{rule, filepath.ToSlash(path), strconv.Itoa(line), message} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
