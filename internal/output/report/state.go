package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/rollout-dev/rollout/internal/derive/resumeinput"
	"github.com/rollout-dev/rollout/internal/derive/stateview"
	"github.com/rollout-dev/rollout/internal/output/schema"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
)

// stateReport is the output of `rollout state`: the common header, the
// file, then the view's fields.
type stateReport struct {
	schema.Header
	Path string `json:"path"`
	stateview.View
}

// InputDoc is what Codex sends on resume of the file at Path: the input
// items it rebuilds from the rollout (`rollout state --items`).
type InputDoc struct {
	Path string
	// CodexVersion is the version that resumes it; WriterVersion the
	// file's (session_meta's cli_version).
	CodexVersion, WriterVersion string
	Items                       []resumeinput.Item
}

// inputReport is InputDoc as JSON: the common header, the file, the
// versions, then the items.
type inputReport struct {
	schema.Header
	Path          string            `json:"path"`
	CodexVersion  string            `json:"codex_version"`
	WriterVersion string            `json:"writer_version"`
	Items         []json.RawMessage `json:"items"`
	// Unmodelled lists the items whose request shape is not known: the
	// record's payload stands in for what Codex sends.
	Unmodelled []unmodelledItem `json:"unmodelled,omitempty"`
}

type unmodelledItem struct {
	Item       int    `json:"item"`
	Line       int    `json:"line"`
	RecordType string `json:"record_type"`
}

// WriteInputJSON writes the output of `rollout state --items`.
func WriteInputJSON(w io.Writer, d InputDoc) error {
	r := inputReport{Header: schema.NewHeader(schema.ResumeInput), Path: d.Path, CodexVersion: d.CodexVersion,
		WriterVersion: d.WriterVersion, Items: resumeinput.Raws(d.Items)}
	for i, it := range d.Items {
		if it.Unmodelled != "" {
			r.Unmodelled = append(r.Unmodelled, unmodelledItem{i, it.From.Line, it.Unmodelled})
		}
	}
	return writeTerminalJSON(w, r)
}

// WriteStateJSON writes the output of `rollout state` for the file at path.
func WriteStateJSON(w io.Writer, path string, v stateview.View) error {
	return writeTerminalJSON(w, stateReport{schema.NewHeader(schema.State), path, v})
}

// writeTerminalJSON writes v as indented JSON that is safe on a terminal
// (the strings it holds come from a rollout; see termsafe.JSON).
func writeTerminalJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encoding JSON: %w", err)
	}
	_, err := w.Write(termsafe.JSON(b.Bytes()))
	return err
}
