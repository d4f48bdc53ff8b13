package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ord(n int64) *int64 { return &n }

func TestFormatsAndLookup(t *testing.T) {
	t.Parallel()
	want := []string{"text", "json", "jsonl", "sarif", "junit", "codeclimate", "github", "markdown", "html"}
	got := Formats()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Formats() mismatch (-want +got):\n%s", diff)
	}
	got[0] = "changed"
	if Formats()[0] != "text" {
		t.Errorf("Formats() shares its slice with the caller")
	}
	for _, name := range want {
		if p, ok := lookup(name); !ok || p == nil {
			t.Errorf("Lookup(%q) = %v, %v; want a printer", name, p, ok)
		}
	}
	for _, name := range []string{"", "JSON", "xml", "text ", "sarif=x"} {
		if _, ok := lookup(name); ok {
			t.Errorf("Lookup(%q) found a printer; want none", name)
		}
	}
}

func TestParseFormatSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec       string
		wantFormat string
		wantFile   string
		wantErr    string // substring; "" for no error
	}{
		{spec: "text", wantFormat: "text"},
		{spec: "json", wantFormat: "json"},
		{spec: "sarif=out/report.sarif", wantFormat: "sarif", wantFile: "out/report.sarif"},
		{spec: "junit=dir/a=b.xml", wantFormat: "junit", wantFile: "dir/a=b.xml"},
		{spec: "markdown=-", wantFormat: "markdown", wantFile: "-"},
		{spec: "", wantErr: "missing format name"},
		{spec: "=out.json", wantErr: "missing format name"},
		{spec: "json=", wantErr: `missing file name after "="`},
		{spec: "xml", wantErr: `unknown format "xml" (want text, json, jsonl, sarif, junit, codeclimate, github, markdown or html)`},
		{spec: "JSON", wantErr: `unknown format "JSON"`},
		{spec: " json", wantErr: `unknown format " json"`},
		{spec: "xml=out.xml", wantErr: `unknown format "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			t.Parallel()
			format, file, err := ParseFormatSpec(tt.spec)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseFormatSpec(%q) = %q, %q, nil; want an error containing %q", tt.spec, format, file, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("ParseFormatSpec(%q) error = %q; want it to contain %q", tt.spec, err, tt.wantErr)
				}
				if format != "" || file != "" {
					t.Errorf("ParseFormatSpec(%q) = %q, %q with an error; want empty values", tt.spec, format, file)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseFormatSpec(%q) error: %v", tt.spec, err)
			}
			if format != tt.wantFormat || file != tt.wantFile {
				t.Errorf("ParseFormatSpec(%q) = %q, %q; want %q, %q", tt.spec, format, file, tt.wantFormat, tt.wantFile)
			}
		})
	}
}
