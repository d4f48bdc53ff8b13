package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestVerifyTruncatedZstd: the findings of the readable part of a
// truncated .zst are reported with the truncation (exit 3); they used to
// be dropped ("0 records").
func TestVerifyTruncatedZstd(t *testing.T) {
	legacy, err := os.ReadFile("testdata/legacy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	plain := bytes.NewBuffer(legacy)
	for i := range 4000 {
		fmt.Fprintf(plain, `{"timestamp":"2026-03-02T10:16:41.000Z","type":"event_msg","payload":{"type":"agent_message","message":"%d %s"}}`+"\n", i, strings.Repeat("y", i%89))
	}
	var z bytes.Buffer
	w, _ := zstd.NewWriter(&z)
	w.Write(plain.Bytes())
	w.Close()
	path := filepath.Join(t.TempDir(), "rollout-cut.jsonl.zst")
	if err := os.WriteFile(path, z.Bytes()[:z.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	io, stdout, stderr := testIO("")
	code := run([]string{"verify", "--format", "json", path}, io)
	if code != exitIncomplete {
		t.Errorf("exit %d, want %d\n%s", code, exitIncomplete, stderr)
	}
	out := stdout.String()
	for _, want := range []string{`"rule": "item/missing-id"`, `"line": 9,`, `"code": "read-failed"`, `ends early (truncated?)`} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %s:\n%.3000s", want, out)
		}
	}
}
