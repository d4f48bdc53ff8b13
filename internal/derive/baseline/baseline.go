// Package baseline records the findings a team accepts (`rollout verify
// --write-baseline FILE`) so that later runs (`--baseline FILE`) report only
// new ones. It sits beside the printers, after checks/: it sees findings,
// never records, except to hash the lines findings point at.
//
// A finding is known by a fingerprint that survives unrelated edits: the
// rule, the file's identity (its thread id when known, else its
// slash-separated path) and a hash of the record the finding is on, not its
// line number. Lines added or removed elsewhere, or the file being moved
// (when it has a thread id), keep the fingerprint; editing the record
// itself makes the finding new. Several findings with one fingerprint (two
// identical blank lines) are counted: the baseline suppresses as many as it
// recorded.
package baseline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rollout-dev/rollout/rollout"
)

// Version is the version of the baseline file format.
const Version = 1

// File is the baseline file: a JSON document, sorted, one entry per
// fingerprint. Rule, path, line and message are there for the people who
// review the file; only the fingerprint and the count are matched.
type File struct {
	Version  int     `json:"version"`
	Tool     string  `json:"tool"`
	Findings []Entry `json:"findings"`
}

// Entry is one accepted finding (Count of them with the same fingerprint).
type Entry struct {
	Fingerprint string `json:"fingerprint"`
	Rule        string `json:"rule"`
	Path        string `json:"path"`
	Line        int    `json:"line"`
	Message     string `json:"message"`
	Count       int    `json:"count"`
}

// Identity is the file part of a fingerprint: the thread id when known
// (a rollout keeps it when moved or archived), else the slash-separated path.
func Identity(threadID, path string) string {
	if threadID != "" {
		return "thread:" + threadID
	}
	return "path:" + filepath.ToSlash(path)
}

// Fingerprint is the hex of the first 16 bytes of the SHA-256 of rule,
// identity and record hash, each followed by a NUL byte.
func Fingerprint(rule, identity, recordHash string) string {
	h := sha256.New()
	for _, s := range []string{rule, identity, recordHash} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// HashRecords reads a rollout and returns the hash of each wanted line
// (1-based): the SHA-256 of its bytes without the line ending, or for a line
// longer than maxLineBytes, which the reader does not keep, of its length.
// Line 0 (a finding about the whole file) hashes to "". It streams: memory
// is one line plus the result.
func HashRecords(r io.Reader, lines []int, maxLineBytes int64) (map[int]string, error) {
	want := make(map[int]bool, len(lines))
	last := 0
	for _, l := range lines {
		if l > 0 {
			want[l] = true
			last = max(last, l)
		}
	}
	out := make(map[int]string, len(want)+1)
	out[0] = ""
	if len(want) == 0 {
		return out, nil
	}
	rd := rollout.NewReader(r, maxLineBytes)
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if !want[rec.Line] {
			if rec.Line >= last {
				return out, nil
			}
			continue
		}
		if rec.Raw == nil && rec.Size > 0 {
			out[rec.Line] = "size:" + strconv.FormatInt(rec.Size, 10)
		} else {
			sum := sha256.Sum256(rec.Raw)
			out[rec.Line] = hex.EncodeToString(sum[:])
		}
	}
}

// Builder collects the findings of a run into a File.
type Builder struct {
	byFP map[string]*Entry
}

// Add records one finding.
func (b *Builder) Add(fingerprint, rule, path string, line int, message string) {
	if b.byFP == nil {
		b.byFP = map[string]*Entry{}
	}
	if e, ok := b.byFP[fingerprint]; ok {
		e.Count++
		return
	}
	b.byFP[fingerprint] = &Entry{Fingerprint: fingerprint, Rule: rule, Path: filepath.ToSlash(path), Line: line, Message: message, Count: 1}
}

// File returns the baseline, entries sorted by (path, line, rule,
// fingerprint) so that it diffs well under version control.
func (b *Builder) File(tool string) File {
	f := File{Version: Version, Tool: tool, Findings: make([]Entry, 0, len(b.byFP))}
	for _, e := range b.byFP {
		f.Findings = append(f.Findings, *e)
	}
	slices.SortFunc(f.Findings, func(a, b Entry) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		return strings.Compare(a.Fingerprint, b.Fingerprint)
	})
	return f
}

// Write encodes a baseline file, indented, ending with a newline.
func Write(w io.Writer, f File) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// Set is a loaded baseline: how many findings of each fingerprint are still
// to be suppressed.
type Set struct {
	remaining map[string]int
}

// Read loads a baseline file. It fails on another version or a malformed
// file, naming what is wrong.
func Read(r io.Reader) (*Set, error) {
	var f File
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a rollout baseline: %w", err)
	}
	if f.Version != Version {
		return nil, fmt.Errorf("baseline version %d, want %d (write it again with --write-baseline)", f.Version, Version)
	}
	s := &Set{remaining: make(map[string]int, len(f.Findings))}
	for _, e := range f.Findings {
		s.remaining[e.Fingerprint] += max(e.Count, 1)
	}
	return s, nil
}

// Suppress reports whether a finding with this fingerprint is in the
// baseline, and uses up one of its count.
func (s *Set) Suppress(fingerprint string) bool {
	if s.remaining[fingerprint] > 0 {
		s.remaining[fingerprint]--
		return true
	}
	return false
}
