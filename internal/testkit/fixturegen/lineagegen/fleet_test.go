package lineagegen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A fleet has the rollouts asked for, the same bytes from the same seed,
// and every continuation's history_base names its source's rollout id at
// an offset that ends a line of the source.
func TestWriteFleet(t *testing.T) {
	dir := t.TempDir()
	fl, err := WriteFleet(dir, FleetOptions{Rollouts: 300, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(fl.Files) != 300 {
		t.Fatalf("%d files, want 300", len(fl.Files))
	}
	kinds := map[string]int{}
	byPath := map[string]FleetFile{}
	for _, f := range fl.Files {
		kinds[f.Kind]++
		byPath[f.Path] = f
	}
	for _, k := range []string{"root", "fork", "revert", "subagent"} {
		if kinds[k] == 0 {
			t.Errorf("no %s among %v", k, kinds)
		}
	}
	ids := map[string]string{}
	for _, f := range fl.Files {
		data, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) != f.Size {
			t.Errorf("%s: %d bytes, listed %d", f.Path, len(data), f.Size)
		}
		meta := headOf(t, data)
		id := meta.ID
		if _, rolloutID, ok := strings.Cut(strings.TrimSuffix(filepath.Base(f.Path), ".jsonl"), "_"); ok {
			id = rolloutID // a revert's rollout id is its own
		}
		if other, dup := ids[id]; dup {
			t.Errorf("%s and %s share the rollout id %s", other, f.Path, id)
		}
		ids[id] = f.Path
		if f.Kind != "fork" && f.Kind != "revert" {
			continue
		}
		src, ok := byPath[f.Source]
		if !ok || src.Home != f.Home {
			t.Fatalf("%s: source %q is not in its home", f.Path, f.Source)
		}
		if !strings.Contains(filepath.Base(src.Path), meta.HistoryBase.ThreadID) {
			t.Errorf("%s: history_base names %s, its source is %s", f.Path, meta.HistoryBase.ThreadID, src.Path)
		}
		srcData, err := os.ReadFile(filepath.Join(dir, src.Path))
		if err != nil {
			t.Fatal(err)
		}
		if end := meta.HistoryBase.EndByteOffset; end <= 0 || end > int64(len(srcData)) || srcData[end-1] != '\n' {
			t.Errorf("%s: history_base offset %d does not end a line of %s (%d bytes)", f.Path, end, src.Path, len(srcData))
		}
	}
	again := t.TempDir()
	if _, err := WriteFleet(again, FleetOptions{Rollouts: 300, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	for _, f := range fl.Files[:50] {
		a, _ := os.ReadFile(filepath.Join(dir, f.Path))
		b, err := os.ReadFile(filepath.Join(again, f.Path))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s differs between two runs with one seed (%v)", f.Path, err)
		}
	}
}

type fleetHead struct {
	ID          string `json:"id"`
	HistoryBase struct {
		ThreadID      string `json:"thread_id"`
		EndByteOffset int64  `json:"end_byte_offset"`
	} `json:"history_base"`
}

func headOf(t *testing.T, data []byte) fleetHead {
	t.Helper()
	line, _, _ := bytes.Cut(data, []byte("\n"))
	var rec struct {
		Type    string    `json:"type"`
		Payload fleetHead `json:"payload"`
	}
	if err := json.Unmarshal(line, &rec); err != nil || rec.Type != "session_meta" {
		t.Fatalf("first line %.80q: not a session_meta (%v)", line, err)
	}
	return rec.Payload
}
