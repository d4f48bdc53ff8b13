package rollout

import (
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
