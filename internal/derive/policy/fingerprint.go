package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"path/filepath"
	"strconv"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/rollout"
)

// A finding is known to the baseline by a fingerprint that survives
// unrelated edits: the rule, the file's identity (its thread id when known,
// else its slash-separated path) and a hash of the record the finding is
// on, not its line number. Lines added or removed elsewhere, or the file
// being moved (when it has a thread id), keep the fingerprint; editing the
// record itself makes the finding new.

// fingerprinter computes the fingerprint of each finding, when a baseline
// is used.
type fingerprinter struct{ on bool }

func (fingerprinter) name() string { return "fingerprint" }

func (s fingerprinter) process(f *file) {
	if !s.on {
		return
	}
	id := identity(f.entry.ThreadID, f.entry.Path)
	f.fingerprints = make([]string, len(f.entry.Findings))
	for i, fd := range f.entry.Findings {
		hash, ok := f.Hashes[fd.Line]
		if !ok {
			// Standard input cannot be read twice: the message stands in
			// for the record.
			hash = "message:" + fd.Message
		}
		f.fingerprints[i] = fingerprint(fd.Rule, id, hash)
	}
}

// identity is the file part of a fingerprint: the thread id when known (a
// rollout keeps it when moved or archived), else the slash-separated path.
func identity(threadID, path string) string {
	if threadID != "" {
		return "thread:" + threadID
	}
	return "path:" + filepath.ToSlash(path)
}

// fingerprint is the hex of the first 16 bytes of the SHA-256 of rule,
// identity and record hash, each followed by a NUL byte.
func fingerprint(rule, identity, recordHash string) string {
	h := sha256.New()
	for _, s := range []string{rule, identity, recordHash} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// HashRecords hashes the records a file's findings are on, reading the
// file a second time (only when the pipeline NeedsHashes), for Input.Hashes.
// It returns nil for standard input or when the file cannot be read again:
// the findings' messages then stand in for their records.
func HashRecords(path string, res *checks.Result, maxLineBytes int64) map[int]string {
	if path == rollout.StdinPath || len(res.Findings) == 0 {
		return nil
	}
	f, err := rollout.Open(path, nil)
	if err != nil {
		return nil
	}
	defer f.Close()
	lines := make([]int, len(res.Findings))
	for i, fd := range res.Findings {
		lines[i] = fd.Line
	}
	hashes, err := hashRecords(f, lines, maxLineBytes)
	if err != nil {
		return nil
	}
	return hashes
}

// hashRecords reads a rollout and returns the hash of each wanted line
// (1-based): the SHA-256 of its bytes without the line ending, or for a line
// longer than maxLineBytes, which the reader does not keep, of its length.
// Line 0 (a finding about the whole file) hashes to "". It streams: memory
// is one line plus the result.
func hashRecords(r io.Reader, lines []int, maxLineBytes int64) (map[int]string, error) {
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
