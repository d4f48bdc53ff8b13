package report

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// The table's names, help, aliases and errors, as the commands show them.
func TestFormatTable(t *testing.T) {
	for _, tt := range []struct {
		doc               Document
		spec              string
		name, file        string
		wantErr, wantHint string
	}{
		{doc: DocBudget, spec: "table", name: "text"},
		{doc: DocFleet, spec: "table=out.txt", name: "text", file: "out.txt"},
		{doc: DocFleet, spec: "svg=a=b.svg", name: "svg", file: "a=b.svg"},
		{doc: DocBudget, spec: "xml", wantErr: `invalid --format "xml"`, wantHint: "use --format text|json|csv|svg|png"},
		{doc: DocFleet, spec: "xml=f", wantErr: `invalid --format "xml=f"`, wantHint: "use --format text|json|csv|svg|png|parquet"},
		{doc: DocFleet, spec: "parquet=out", name: "parquet", file: "out"},
		{doc: DocVerify, spec: "parquet=out/pq", name: "parquet", file: "out/pq"},
		{doc: DocHome, spec: "parquet=out", wantErr: `parse --format "parquet=out": unknown format "parquet"`,
			wantHint: "formats: text, json, jsonl, sarif, junit, codeclimate, github, markdown, html"},
		{doc: DocSpace, spec: "xml", wantErr: `invalid --format "xml"`, wantHint: "use --format text|json|csv"},
		{doc: DocDiff, spec: "yaml", wantErr: `invalid --format "yaml"`, wantHint: "use --format text|json"},
		{doc: DocReclaim, spec: "table", wantErr: `invalid --format "table"`, wantHint: "use --format text|json"},
		{doc: DocVerify, spec: "sarif=r.sarif", name: "sarif", file: "r.sarif"},
		{doc: DocVerify, spec: "table", wantErr: `parse --format "table": unknown format "table"`,
			wantHint: "formats: text, json, jsonl, sarif, junit, codeclimate, github, markdown, html, parquet"},
		// A typo: the nearest format first, the list once.
		{doc: DocVerify, spec: "jsn", wantErr: `parse --format "jsn": unknown format "jsn"`,
			wantHint: "did you mean --format json? (formats: text, json, jsonl, sarif, junit, codeclimate, github, markdown, html, parquet)"},
		{doc: DocVerify, spec: "sarf=out.sarif", wantErr: `parse --format "sarf=out.sarif": unknown format "sarf"`,
			wantHint: "did you mean --format sarif? (formats: text, json, jsonl, sarif, junit, codeclimate, github, markdown, html, parquet)"},
		{doc: DocSpace, spec: "cvs", wantErr: `invalid --format "cvs"`, wantHint: "did you mean --format csv? (use --format text|json|csv)"},
		{doc: DocHome, spec: "json=", wantErr: `parse --format "json=": missing file name after "="`,
			wantHint: "formats: text, json, jsonl, sarif, junit, codeclimate, github, markdown, html"},
	} {
		name, file, err := ParseFormat(tt.doc, tt.spec)
		if tt.wantErr == "" {
			if err != nil || name != tt.name || file != tt.file {
				t.Errorf("ParseFormat(%s, %q) = %q, %q, %v; want %q, %q", tt.doc, tt.spec, name, file, err, tt.name, tt.file)
			}
			continue
		}
		var fe *FormatError
		if !errors.As(err, &fe) || err.Error() != tt.wantErr || fe.Hint() != tt.wantHint {
			t.Errorf("ParseFormat(%s, %q) error %v (hint %q); want %q (hint %q)", tt.doc, tt.spec, err, hint(fe), tt.wantErr, tt.wantHint)
		}
	}
}

func hint(fe *FormatError) string {
	if fe == nil {
		return ""
	}
	return fe.Hint()
}

// Every document has formats, each name once, text (or json) first: the
// default of its --format.
func TestFormatTableShape(t *testing.T) {
	for _, row := range formatTable() {
		names := FormatsOf(row.doc)
		if len(names) == 0 || (names[0] != "text" && names[0] != "json") {
			t.Errorf("%s: formats %v", row.doc, names)
		}
		sorted := slices.Clone(names)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != len(names) {
			t.Errorf("%s: a format twice in %v", row.doc, names)
		}
		if err := Write(&bytes.Buffer{}, row.doc, "xml", nil); err == nil {
			t.Errorf("%s: Write of an unknown format did not fail", row.doc)
		}
	}
	if got := FormatHelp(DocVerify); got != "text|json|jsonl|sarif|junit|codeclimate|github|markdown|html|parquet" {
		t.Errorf("verify's formats %q", got)
	}
	if err := Write(&bytes.Buffer{}, DocVerify, "parquet", VerifyDoc{Report: sample()}); err == nil {
		t.Error("Write of a directory format to a stream did not fail")
	}
}
