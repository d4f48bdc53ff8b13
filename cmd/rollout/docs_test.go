package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The committed docs name no machine's paths, no spec files the repository
// does not hold, and no work promised to "a later issue".
func TestDocsArePortable(t *testing.T) {
	t.Parallel()
	docs, _ := filepath.Glob("../../docs/*.md")
	more, _ := filepath.Glob("../../fixtures/*/README.md")
	docs = append(append(docs, "../../README.md"), more...)
	if len(docs) < 3 {
		t.Fatalf("found only %v", docs)
	}
	bad := regexp.MustCompile(`(/work/|/root/|/home/[a-z]|/Users/|[A-Z]:\\Users)[^ ]*|shared spec|the \w+ spec\b|a later issue`)
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range bad.FindAll(b, -1) {
			t.Errorf("%s: %q", p, m)
		}
	}
}
