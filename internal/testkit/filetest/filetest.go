// Package filetest holds the file helpers that the tests of the edit stage
// and of cmd/rollout share: reading, listing and appending to files, zstd
// in and out, and a broken rollout every repair changes. Tests only.
package filetest

import (
	"bytes"
	"os"
	"regexp"
	"sort"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/gen"
)

// Read is the content of path; it fails the test when it cannot be read.
func Read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// List is the names in dir, sorted.
func List(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// Append appends b to path, as an agent appends to its rollout (errors are
// reported, not fatal: it runs inside a repair's stage hook).
func Append(t testing.TB, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Error(err)
		return
	}
	if _, err := f.Write(b); err != nil {
		t.Error(err)
	}
	f.Close()
}

// Zstd is b compressed.
func Zstd(t testing.TB, b []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// Unzstd is the decompressed content of path.
func Unzstd(t testing.TB, path string) []byte {
	t.Helper()
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	out, err := dec.DecodeAll(Read(t, path), nil)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// BrokenRollout is a generated rollout of about size bytes with faults
// every repair fixes: ids deleted and a torn tail, so a repair writes a
// file and a quarantine.
func BrokenRollout(t testing.TB, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Seed: 3, TargetBytes: size}); err != nil {
		t.Fatal(err)
	}
	b := PayloadID.ReplaceAll(buf.Bytes(), []byte(`"payload":{"type":"$1",`))
	return append(b, `{"timestamp":"2026-03-10T09:35:30.333Z","type":"event_msg","payload":{"type":"task_st`...)
}

// PayloadID matches an item's type and id at the start of its payload.
var PayloadID = regexp.MustCompile(`"payload":\{"type":"([a-z_]+)","id":"([^"]*)",`)
