package view

import (
	"strings"
	"testing"
	"unsafe"
)

// A clipped string must not keep the whole string alive: the page keeps
// thousands of them, cut from tool outputs of megabytes.
func TestClipCopies(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 1000) // 2000 bytes
	got, cut := clip(long, 101)
	if !cut || len(got) != 100 || got != long[:100] {
		t.Fatalf("clip: %d bytes, cut %v; want the first 100 bytes (a rune boundary)", len(got), cut)
	}
	if unsafe.StringData(got) == unsafe.StringData(long) {
		t.Errorf("the clipped string shares the memory of the whole one")
	}
	if got, cut := clip("short", 101); cut || got != "short" {
		t.Errorf("clip(short) = %q, %v", got, cut)
	}
	if got, _ := clip("a\xffb", 10); got != "a\uFFFDb" {
		t.Errorf("invalid UTF-8 not replaced: %q", got)
	}
}
