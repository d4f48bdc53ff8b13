package progress

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProgressBytes: one big file gets a progress line by bytes read,
// redrawn at most every 100ms, with the rate and the ETA once a second
// has gone by; a small one gets none.
func TestProgressBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big, small := filepath.Join(dir, "big.jsonl"), filepath.Join(dir, "small.jsonl")
	for p, size := range map[string]int64{big: 100 << 20, small: 1000} {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil { // sparse: only its size is read
			t.Fatal(err)
		}
		f.Close()
	}
	var stderr strings.Builder
	if p := New(&stderr, "verifying", []string{small}, true); p.Enabled() {
		t.Errorf("progress enabled for one small file")
	}
	p := New(&stderr, "verifying", []string{big}, true)
	if !p.Enabled() {
		t.Fatalf("progress disabled for one %d-byte file", p.total)
	}
	clock := time.Unix(1000, 0)
	p.now = func() time.Time { return clock }
	p.Add(25 << 20) // drawn: the first
	p.Add(25 << 20) // not drawn: same instant
	clock = clock.Add(4 * time.Second)
	p.Add(25 << 20) // 75 MiB in 4s: 18.8 MiB/s, 25 MiB to go: ETA 1s
	p.Step()
	p.Finish()
	want := "\rverifying 0/1 files, 25.0 MiB of 100.0 MiB (25%)\x1b[K" +
		"\rverifying 0/1 files, 75.0 MiB of 100.0 MiB (75%), 18.8 MiB/s, ETA 1s\x1b[K" +
		"\rverifying 1/1 files, 75.0 MiB of 100.0 MiB (75%), 18.8 MiB/s, ETA 1s\x1b[K\r\x1b[K"
	if stderr.String() != want {
		t.Errorf("stderr\n%q\nwant\n%q", stderr.String(), want)
	}
	if got := eta(3*time.Minute + 5*time.Second); got != "3m05s" {
		t.Errorf("eta = %q", got)
	}
}

// TestStepFile: a file done counts its size and a step when the line is
// drawn; when it is not, nothing is counted (and nothing stat'ed).
func TestStepFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, make([]byte, 3000), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stderr strings.Builder
	p := New(&stderr, "planning", []string{a, b}, true)
	p.StepFile(a)
	if p.read != 3000 || p.done != 1 {
		t.Errorf("after one file: %d bytes, %d done", p.read, p.done)
	}
	off := New(&stderr, "planning", []string{a, b}, false)
	off.StepFile(a)
	if off.read != 0 || off.done != 0 {
		t.Errorf("not drawn: %d bytes, %d done counted", off.read, off.done)
	}
}
