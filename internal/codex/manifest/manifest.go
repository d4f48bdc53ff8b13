// Package manifest is a fleet's inventory of rollouts, made once by
// `rollout plan`: for each object or file its URI, size and version (ETag
// or modification time) and what its session_meta says, including the root
// of its lineage. A shard of a run reads its slice of the manifest and
// nothing else to know what to read and how the rollouts continue each
// other: one listing and one head read per rollout for the whole run,
// instead of a head read per rollout per shard.
//
// The file is JSON Lines: a header object, then one entry per rollout in
// the order the sources were walked. It sits in the Codex stage, after
// lineage, whose keys it records.
package manifest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rollout-dev/rollout/internal/base/objstore"
	"github.com/rollout-dev/rollout/internal/base/shard"
	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/rollout"
)

// Version is the manifest format's version, in every header.
const Version = 1

// Header is a manifest's first line.
type Header struct {
	Format  string   `json:"format"` // "rollout-manifest"
	Version int      `json:"version"`
	Sources []string `json:"sources"`
	Count   int      `json:"rollouts"`
}

const formatName = "rollout-manifest"

// Entry is one rollout.
type Entry struct {
	URI      string    `json:"uri"`
	Size     int64     `json:"size"`
	ETag     string    `json:"etag,omitempty"`
	Modified time.Time `json:"modified"`
	// LineageRoot is the shard key: the rollout id at the root of the
	// lineage, or the URI for a rollout that names no id.
	LineageRoot string `json:"lineage_root"`
	ThreadID    string `json:"thread_id,omitempty"`
	RolloutID   string `json:"rollout_id,omitempty"`
	CLIVersion  string `json:"cli_version,omitempty"`
	Meta        *Meta  `json:"session_meta,omitempty"` // nil: none in the first lines
	Error       string `json:"error,omitempty"`        // the head could not be read
}

// Meta is rollout.Meta as a manifest spells it.
type Meta struct {
	Line          int    `json:"line"`
	Offset        int64  `json:"offset"`
	HistoryMode   string `json:"history_mode,omitempty"`
	ForkedFrom    string `json:"forked_from_id,omitempty"`
	ParentThread  string `json:"parent_thread_id,omitempty"`
	SubagentStart int64  `json:"subagent_history_start_ordinal"`
	Base          *Base  `json:"history_base,omitempty"`
}

// Base is rollout.HistoryBase.
type Base struct {
	RolloutID  string `json:"rollout_id"`
	EndOrdinal int64  `json:"end_ordinal_exclusive"`
	EndOffset  int64  `json:"end_byte_offset"`
	Malformed  string `json:"malformed,omitempty"`
}

func metaOf(m rollout.Meta) *Meta {
	if !m.Found {
		return nil
	}
	out := &Meta{Line: m.Line, Offset: m.Offset, HistoryMode: m.HistoryMode, ForkedFrom: m.ForkedFrom,
		ParentThread: m.ParentThread, SubagentStart: m.SubagentStart}
	if b := m.Base; b != nil {
		out.Base = &Base{RolloutID: b.RolloutID, EndOrdinal: b.EndOrdinal, EndOffset: b.EndOffset, Malformed: b.Malformed}
	}
	return out
}

// RolloutMeta is the session_meta the entry records.
func (e *Entry) RolloutMeta() rollout.Meta {
	m := e.Meta
	if m == nil {
		return rollout.Meta{SubagentStart: -1}
	}
	out := rollout.Meta{Found: true, Line: m.Line, Offset: m.Offset, ThreadID: e.ThreadID, HistoryMode: m.HistoryMode,
		ForkedFrom: m.ForkedFrom, ParentThread: m.ParentThread, SubagentStart: m.SubagentStart, CLIVersion: e.CLIVersion}
	if b := m.Base; b != nil {
		out.Base = &rollout.HistoryBase{RolloutID: b.RolloutID, EndOrdinal: b.EndOrdinal, EndOffset: b.EndOffset, Malformed: b.Malformed}
	}
	return out
}

// Object is the stored object the entry describes.
func (e *Entry) Object() objstore.Object {
	return objstore.Object{URI: e.URI, Size: e.Size, ETag: e.ETag, Modified: e.Modified}
}

// Plan describes the rollouts paths (already discovered): their size and
// version, and their heads, read jobs at a time (object storage is bound by
// latency, not bandwidth). Then the lineage roots over all of them.
func Plan(ctx context.Context, paths []string, jobs int) []Entry {
	entries := make([]Entry, len(paths))
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(1, jobs) {
		wg.Go(func() {
			for i := range work {
				entries[i] = describe(ctx, paths[i])
			}
		})
	}
	for i := range paths {
		work <- i
	}
	close(work)
	wg.Wait()
	_, keys := index(entries)
	for i := range entries {
		entries[i].LineageRoot = keys[entries[i].URI]
	}
	return entries
}

func describe(ctx context.Context, path string) Entry {
	e := Entry{URI: path}
	o, err := objstore.StatAny(ctx, path)
	if err != nil {
		e.Error = err.Error()
		return e
	}
	e.Size, e.ETag, e.Modified = o.Size, o.ETag, o.Modified.UTC()
	if n, ok := rollout.ParseName(path); ok {
		e.RolloutID = n.Rollout
	}
	m, err := rollout.ReadMeta(path)
	if err != nil {
		e.Error = err.Error()
		return e
	}
	e.ThreadID, e.CLIVersion, e.Meta = m.ThreadID, m.CLIVersion, metaOf(m)
	if e.RolloutID == "" {
		e.RolloutID = m.ThreadID
	}
	return e
}

// index is the lineage index of entries, built from what they record, and
// the shard key of each.
func index(entries []Entry) (*lineage.Index, map[string]string) {
	paths := make([]string, len(entries))
	metas := make([]rollout.Meta, len(entries))
	errs := make([]error, len(entries))
	for i := range entries {
		paths[i], metas[i] = entries[i].URI, entries[i].RolloutMeta()
		if entries[i].Error != "" {
			errs[i] = errors.New(entries[i].Error)
		}
	}
	ix := lineage.Known(paths, metas, errs)
	return ix, ix.ShardKeys(paths)
}

// Index is the lineage index of a manifest's entries (a slice of it: one
// shard's), reading no file.
func Index(entries []Entry) *lineage.Index {
	ix, _ := index(entries)
	return ix
}

// Write writes a manifest.
func Write(w io.Writer, sources []string, entries []Entry) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Header{Format: formatName, Version: Version, Sources: sources, Count: len(entries)}); err != nil {
		return err
	}
	for i := range entries {
		if err := enc.Encode(&entries[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// maxLine bounds a manifest line: an entry is a few hundred bytes.
const maxLine = 1 << 20

// Read reads the manifest at path (a file, "-" for r, or an object URI),
// keeping the entries of part (nil: all), streamed: memory follows the
// slice kept, not the manifest.
func Read(path string, r io.Reader, part *shard.Spec) (Header, []Entry, error) {
	var h Header
	if path != rollout.StdinPath {
		var f io.ReadCloser
		var err error
		if objstore.IsURI(path) {
			f, err = objstore.Open(context.Background(), path, 0, -1)
		} else {
			f, err = os.Open(path)
		}
		if err != nil {
			return h, nil, fmt.Errorf("reading the manifest %s: %w", path, err)
		}
		defer f.Close()
		r = f
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var out []Entry
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(line) > 0 {
			if n == 1 {
				if jerr := json.Unmarshal(line, &h); jerr != nil || h.Format != formatName {
					return h, nil, fmt.Errorf("%s is not a rollout manifest (made by rollout plan): its first line is no manifest header", path)
				}
				if h.Version != Version {
					return h, nil, fmt.Errorf("%s is a manifest of version %d; this rollout reads version %d: plan again", path, h.Version, Version)
				}
			} else {
				var e Entry
				if jerr := json.Unmarshal(line, &e); jerr != nil || e.URI == "" {
					return h, nil, fmt.Errorf("%s:%d: not a manifest entry", path, n)
				}
				if part == nil || part.Contains(e.LineageRoot) {
					out = append(out, e)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return h, nil, fmt.Errorf("reading the manifest %s: %w", path, err)
		}
	}
	if h.Format == "" {
		return h, nil, fmt.Errorf("%s is empty: not a rollout manifest", path)
	}
	return h, out, nil
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("a line longer than %d bytes", maxLine)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > 0 && line[len(line)-1] == '\n' {
				line = line[:len(line)-1]
			}
			return line, err
		}
	}
}

// FindThread lists the entries whose thread id (from session_meta, else
// the file name) is query or starts with it, as rollout.FindThreads does
// for files, reading none.
func FindThread(entries []Entry, query string) []rollout.ThreadMatch {
	query = strings.ToLower(query)
	var out []rollout.ThreadMatch
	for i := range entries {
		e := &entries[i]
		name, _ := rollout.ParseName(e.URI)
		thread := e.ThreadID
		if thread == "" {
			thread = name.Thread
		}
		if thread != "" && strings.HasPrefix(thread, query) {
			out = append(out, rollout.ThreadMatch{Path: e.URI, ThreadID: thread, NameID: name.Thread, MetaID: e.ThreadID})
		}
	}
	return out
}

// Slice is what a shard reads of the manifest at path: the URIs of part's
// entries (nil: all) in manifest order, pinned to the size and version the
// plan saw (objstore.Pin: objects and files alike are read to that size),
// and their lineage index, built from the manifest alone.
func Slice(path string, r io.Reader, part *shard.Spec) ([]string, *lineage.Index, error) {
	_, entries, err := Read(path, r, part)
	if err != nil {
		return nil, nil, err
	}
	paths := make([]string, len(entries))
	for i := range entries {
		objstore.Pin(entries[i].Object())
		paths[i] = entries[i].URI
	}
	return paths, Index(entries), nil
}

// Tally counts the lineages of entries and the heads that could not be read.
func Tally(entries []Entry) (lineages, unreadable int) {
	roots := map[string]bool{}
	for i := range entries {
		roots[entries[i].LineageRoot] = true
		if entries[i].Error != "" {
			unreadable++
		}
	}
	return len(roots), unreadable
}
