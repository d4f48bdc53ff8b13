package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/output/report"
)

// signalWriter records what is written and closes first on the first write.
type signalWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	once  sync.Once
	first chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.once.Do(func() { close(w.first) })
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestVerifyStreams: the first file's findings reach standard output while
// the last file (standard input, a pipe nobody has written to yet) is still
// being read. A verify that kept every file until the end would wait for
// the pipe forever; the guard below turns that into a failure.
func TestVerifyStreams(t *testing.T) {
	// The demo rollout has findings: a missing id, a wrong prefix, a torn
	// tail.
	demo, err := os.ReadFile(demoRollout)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	// "+" sorts before "-": the file comes first in the report, standard
	// input last.
	if err := os.Mkdir("+a", 0o755); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join("+a", "rollout-a.jsonl")
	if err := os.WriteFile(first, demo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []string{"1", "2", "8"} {
		t.Run("jobs "+jobs, func(t *testing.T) {
			in, feed := io.Pipe()
			out := &signalWriter{first: make(chan struct{})}
			var stderr strings.Builder
			done := make(chan int)
			go func() {
				done <- run([]string{"verify", "--jobs", jobs, "--format", "text", first, "-"}, &IO{In: in, Out: out, Err: &stderr})
			}()
			select {
			case <-out.first:
			case code := <-done:
				t.Fatalf("verify ended (exit %d) before standard input was written; stderr %q", code, stderr.String())
			case <-time.After(20 * time.Second):
				feed.Close()
				t.Fatal("nothing written while standard input was pending: the report is not streamed")
			}
			before := out.String()
			if !strings.Contains(before, first+":11: error:") || strings.Contains(before, "-:") {
				t.Errorf("written before standard input was read: %q; want the first file's findings only", before)
			}
			feed.Write(demo)
			feed.Close()
			if code := <-done; code != exitFindings {
				t.Fatalf("exit code %d; stderr %q", code, stderr.String())
			}
			want := strings.ReplaceAll(strings.TrimSuffix(before, "\n"), first+":", "-:")
			if got := out.String(); !strings.HasPrefix(got, before+want+"\n") || !strings.HasSuffix(got, "2 files, 56 records: 4 errors, 2 warnings, 0 infos\n") {
				t.Errorf("output:\n%s\nwant the first file's findings, the same for standard input, and the summary", got)
			}
		})
	}
}

// TestVerifyJobsIdentical: every format is byte for byte the same for
// --jobs 1, 2 and 8, the files finishing in a different order each time.
func TestVerifyJobsIdentical(t *testing.T) {
	t.Parallel()
	for _, format := range report.Formats() {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			var want string
			for _, jobs := range []string{"1", "2", "8"} {
				io, stdout, stderr := testIO("")
				code := run([]string{"verify", "--jobs", jobs, "--format", format, "--statistics", "--now", "2026-11-30T00:00:00Z", "../../fixtures"}, io)
				if code != exitFindings && code != exitIncomplete {
					t.Fatalf("--jobs %s: exit code %d; stderr %q", jobs, code, stderr)
				}
				if jobs == "1" {
					want = stdout.String()
					if len(want) < 1000 {
						t.Fatalf("--jobs 1: only %d bytes of %s", len(want), format)
					}
					continue
				}
				if diff := cmp.Diff(want, stdout.String()); diff != "" {
					t.Errorf("--jobs %s differs from --jobs 1 (-1 +%s):\n%s", jobs, jobs, diff)
				}
			}
		})
	}
}
