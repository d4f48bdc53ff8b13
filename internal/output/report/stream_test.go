package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
)

// TestSpoolToDisk: a report whose spooled part outgrows memory goes through
// a temporary file and comes out the same, and the file is removed. Not
// parallel: it changes spoolMemory and TMPDIR.
func TestSpoolToDisk(t *testing.T) {
	r := &result.Report{Tool: "rollout", Version: "test", Command: "verify", Notes: []string{"a note"}}
	for i := range 4 {
		f := result.FileResult{Path: fmt.Sprintf("s/rollout-%d.jsonl", i), Records: 100}
		if i == 2 {
			f.Error = &result.FileError{Code: result.ErrReadFailed, Message: "corrupt"}
		}
		for line := range 300 {
			f.Findings = append(f.Findings, checks.Finding{Rule: fmt.Sprintf("r/%d", line%7), Severity: checks.Severity(line % 3),
				Line: line + 1, Message: fmt.Sprintf("finding %d of file %d", line, i), Evidence: map[string]any{"n": line}})
		}
		r.Files = append(r.Files, f)
	}
	r.Normalize()
	inMemory := map[string]string{}
	for _, format := range Formats() {
		inMemory[format] = render(t, format, r, Options{FailOn: checks.Warning, Statistics: true})
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	defer func(n int) { spoolMemory = n }(spoolMemory)
	spoolMemory = 100
	for _, format := range Formats() {
		got := render(t, format, r, Options{FailOn: checks.Warning, Statistics: true})
		if diff := cmp.Diff(inMemory[format], got); diff != "" {
			t.Errorf("%s spooled to disk differs (-memory +disk):\n%s", format, diff)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) != 0 {
		t.Errorf("spool files left behind: %v", left)
	}
	// The spool did go to disk: a Stream over a failing temporary
	// directory reports it.
	t.Setenv("TMPDIR", filepath.Join(tmp, "missing"))
	for _, format := range []string{"json", "junit", "markdown", "html", "sarif"} {
		var buf bytes.Buffer
		err := printerFor(t, format)(&buf, r, Options{})
		if err == nil || !os.IsNotExist(unwrapAll(err)) {
			t.Errorf("%s with no temporary directory: err = %v; want a spooling error", format, err)
		}
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}
