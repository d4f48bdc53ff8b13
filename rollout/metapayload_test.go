package rollout

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestMetaPayload: the bulky members of a session_meta are left out, every
// other one stays as written and in its order (the first of a repeated key
// still wins), and Meta reads the same Meta as from the whole payload.
func TestMetaPayload(t *testing.T) {
	big := strings.Repeat("instructions ", 2000)
	line := `{"timestamp":"2026-03-10T09:35:30.037Z","type":"session_meta","payload":{"id":"019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90",` +
		`"base_instructions":{"text":"` + big + `"},"cli_version":"0.147.0","hi\u0073tory_mode":"paginated","history_mode":"paginated",` +
		`"user_instructions":"` + big + `","source":{"subagent":{"thread_spawn":{"parent_thread_id":"019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f91"}}},` +
		`"history_base":{"thread_id":"019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f92","end_ordinal_exclusive":3,"end_byte_offset":900},"id":"second"}}` + "\n"
	rd := NewReader(strings.NewReader(line), 0)
	defer rd.Release()
	rec, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	slim := rec.MetaPayload()
	if strings.Contains(slim.Raw, "instructions") || len(slim.Raw) > 600 {
		t.Errorf("MetaPayload kept the instructions: %d bytes", len(slim.Raw))
	}
	full := rec.Payload()
	for _, path := range []string{"id", "cli_version", "history_mode", "hi\\u0073tory_mode", "source.subagent.thread_spawn.parent_thread_id", "history_base.end_byte_offset"} {
		if a, b := slim.Get(path).Raw, full.Get(path).Raw; a != b {
			t.Errorf("%s: %q in MetaPayload, %q in Payload", path, a, b)
		}
	}
	want := MetaOf(rec.Line, rec.Offset, full)
	got := rec.Meta()
	if got.ThreadID != want.ThreadID || got.HistoryMode != want.HistoryMode || got.ParentThread != want.ParentThread ||
		got.Base == nil || *got.Base != *want.Base {
		t.Errorf("Meta = %+v, want %+v", got, want)
	}
}

// TestReadMetaKeepsNoPayload: the Meta ReadMeta returns holds its own
// strings, not the payload they were read from (a lineage index keeps one
// per file of a home): twenty metas of session_metas carrying 1 MiB each
// hold far less than 20 MiB.
func TestReadMetaKeepsNoPayload(t *testing.T) {
	dir := t.TempDir()
	bulk := strings.Repeat("g", 1<<20)
	var paths []string
	for i := range 20 {
		p := filepath.Join(dir, fmt.Sprintf("rollout-2026-03-10T09-35-30-019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f%02d.jsonl", i))
		line := fmt.Sprintf(`{"timestamp":"2026-03-10T09:35:30.037Z","type":"session_meta","payload":{"id":"019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f%02d","git":{"notes":"%s"},"cli_version":"0.147.0","forked_from_id":"019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f99"}}`+"\n", i, bulk)
		if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	metas := make([]Meta, len(paths))
	for i, p := range paths {
		m, err := ReadMeta(p)
		if err != nil || !m.Found || m.ForkedFrom == "" || m.CLIVersion != "0.147.0" {
			t.Fatalf("%s: %+v, %v", p, m, err)
		}
		metas[i] = m
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > 4<<20 {
		t.Errorf("20 metas hold %d bytes: their payloads are kept", held)
	}
	runtime.KeepAlive(metas)
}
