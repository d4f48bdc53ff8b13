// Package filetest holds the helpers that tests of several packages share,
// so that none is copied: reading, listing and appending to files, zstd in
// and out, a broken rollout every repair changes, a FIFO's reader, the
// findings of a Codex home and the lines of an evidence pin. Tests only.
package filetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/gen"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
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

// Tree maps every file under root (its relative path) to its content, a
// symlink to its target: what a refused command must leave as it was.
func Tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "symlink to " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// SHA256 is the hex SHA-256 of b.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// EscapeRollout is the rollout EscapeSetup lays out.
const EscapeRollout = `{"timestamp":"2026-03-10T09:35:30.000Z","type":"session_meta","payload":{"id":"019cd719-fabd-7808-8020-00009e3779b2","cli_version":"0.110.0"}}
{"timestamp":"2026-03-10T09:35:31.000Z","type":"response_item","payload":{"type":"message","id":"msg_019cd719-fb00-7000-8000-000000000001","role":"user","content":[{"type":"input_text","text":"hi"}]}}
`

// EscapeVictim is the content of root/victim.
const EscapeVictim = "the victim's only copy\n"

// EscapeSetup lays out root/victim (outside the rollout's directory) and
// the rollout, in a plain directory or in a Codex home's sessions tree:
// what a crafted undo record or archive must never reach.
func EscapeSetup(t testing.TB, inHome bool) (root, dir, path string) {
	t.Helper()
	root = t.TempDir()
	dir = filepath.Join(root, "case")
	if inHome {
		dir = filepath.Join(root, "home", "sessions", "2026", "03", "10")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "rollout-2026-03-10T09-35-30-019cd719-fabd-7808-8020-00009e3779b2.jsonl")
	os.WriteFile(path, []byte(EscapeRollout), 0o644)
	os.WriteFile(filepath.Join(root, "victim"), []byte(EscapeVictim), 0o644)
	os.WriteFile(filepath.Join(dir, "other.jsonl"), []byte("another file of the directory\n"), 0o644)
	return root, dir, path
}

// HoldOpen starts another process (sleep) that holds path open with flag,
// as an agent idle between turns holds its rollout, until the test ends.
// The test is skipped where there is no sleep to run.
func HoldOpen(t testing.TB, path string, flag int) *exec.Cmd {
	t.Helper()
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("sleep", "60")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// CodexHomeWithTear lays out under a new directory the home Codex 0.171.0
// made (homegen.Base), its rollout ending in a torn line: something for
// repair to fix after the projection's cursor.
func CodexHomeWithTear(t testing.TB) (root, path string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "codex")
	if err := homegen.Build(root, homegen.Base); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(root, filepath.FromSlash(homegen.Rollout))
	Append(t, path, []byte(`{"timestamp":"2026-12-01T20:31:00.000Z","ordinal":24,"type":"event_msg","payl`))
	return root, path
}

// ReadFIFO reads the FIFO at path from another goroutine, as a reader
// process would, and sends what it read (or the error opening it) once the
// writer closes it: a FIFO's writer blocks until a reader opens it.
func ReadFIFO(path string) <-chan string {
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	return got
}

// KeyLines writes sets of keys by name as the sorted lines of an evidence
// pin ("rule: key, key"), one line per name.
func KeyLines(sets map[string]map[string]bool) []string {
	var lines []string
	for name, set := range sets {
		keys := make([]string, 0, len(set))
		for k := range set {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		lines = append(lines, strings.TrimSpace(name+": "+strings.Join(keys, ", ")))
	}
	sort.Strings(lines)
	return lines
}

// HomeFindings checks the Codex home at dir as `rollout home` does and
// returns its findings; an observation no rule judges fails the test.
func HomeFindings(t testing.TB, dir string) ([]checks.Finding, *home.Report) {
	t.Helper()
	rep, err := home.Check(home.New(dir), home.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var fds []checks.Finding
	for _, o := range rep.Observations {
		fd, ok := checks.FindingOf(o.Path, o.Observation)
		if !ok {
			t.Fatalf("observation %T has no rule", o.Evidence)
		}
		fds = append(fds, fd)
	}
	return fds, rep
}

// SpoilHistory makes the history database of the home at root unreadable in
// the way s until the test ends.
func SpoilHistory(t testing.TB, root string, s homegen.Spoilage) {
	t.Helper()
	release, err := homegen.Spoil(filepath.Join(root, "thread_history_1.sqlite"), s)
	t.Cleanup(release)
	if err != nil {
		t.Fatal(err)
	}
}
