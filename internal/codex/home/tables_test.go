//go:build unix

package home_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

// wideRows adds n threads rows of other threads whose rollout_path is
// size bytes long, as issue 36 made them (300 rows of 1 MiB paths), and an
// attached thread with an upper-case id.
func wideRows(t *testing.T, dir string, n, size int) {
	t.Helper()
	runSQL(t, filepath.Join(dir, "state_5.sqlite"), fmt.Sprintf(`WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < %d)
INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title, sandbox_policy, approval_mode)
SELECT printf('0b%%06x-0000-7000-8000-000000000000', n), '/srv/' || hex(zeroblob(%d)), 0, 0, 'exec', 'mock', '/', 't', '{}', 'never' FROM c;
INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title, sandbox_policy, approval_mode, attached_thread_parent_id)
SELECT 'ABCDEF01-0000-7000-8000-000000000000', rollout_path, 0, 0, 'exec', 'mock', '/', 't', '{}', 'never', id FROM threads WHERE id = '%s';`, n, size/2, homegen.Thread))
}

// allocated is how many bytes fn allocates on the Go heap.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Finding one thread, or the attached ones, reads the threads rows it
// needs, not the whole table: with 24 MiB of other rows' paths, a lookup
// allocates a small part of that (reading the table whole, as before,
// allocates all of it). The match is still case-insensitive.
func TestThreadLookupsReadOnlyTheirRows(t *testing.T) {
	dir := buildHome(t, homegen.Base)
	const rows, size = 96, 256 << 10
	wideRows(t, dir, rows, size)
	h := home.New(dir)
	rollout := filepath.Join(dir, filepath.FromSlash(homegen.Rollout))
	const bound = rows * size / 8

	var found []string
	n := allocated(func() {
		ms, err := h.FindThread(homegen.Thread[:8])
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			found = append(found, m.ThreadID+" "+m.Path)
		}
	})
	if want := []string{homegen.Thread + " " + rollout}; !cmp.Equal(found, want) {
		t.Errorf("FindThread = %q, want %q", found, want)
	}
	if n > bound {
		t.Errorf("FindThread allocated %d bytes, want at most %d (the table holds %d bytes of paths)", n, bound, rows*size)
	}

	found = nil
	n = allocated(func() {
		ms, err := h.FindThread("abcdef")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			found = append(found, m.ThreadID)
		}
	})
	if want := []string{"ABCDEF01-0000-7000-8000-000000000000"}; !cmp.Equal(found, want) {
		t.Errorf("FindThread of an upper-case id = %q, want %q", found, want)
	}
	if n > bound {
		t.Errorf("FindThread of an upper-case id allocated %d bytes, want at most %d", n, bound)
	}

	var edges map[string]string
	n = allocated(func() { edges = h.AttachedEdges() })
	if want := map[string]string{"ABCDEF01-0000-7000-8000-000000000000": homegen.Thread}; !cmp.Equal(edges, want) {
		t.Errorf("AttachedEdges = %v, want %v", edges, want)
	}
	if n > bound {
		t.Errorf("AttachedEdges allocated %d bytes, want at most %d", n, bound)
	}
}

// Ids stored in mixed case are found by any case of a prefix, and only
// those whose lower case starts with it.
func TestThreadLookupMixedCase(t *testing.T) {
	dir := buildHome(t, homegen.Base)
	runSQL(t, filepath.Join(dir, "state_5.sqlite"), fmt.Sprintf(`INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title, sandbox_policy, approval_mode)
SELECT v.id, rollout_path, 0, 0, 'exec', 'mock', '/', 't', '{}', 'never' FROM threads,
  (SELECT 'aBcDeF02-0000-7000-8000-000000000000' AS id UNION ALL SELECT 'ABCDEG00-0000-7000-8000-000000000000'
   UNION ALL SELECT 'Abcdef02-0000-7000-8000-000000000001') v WHERE threads.id = '%s';`, homegen.Thread))
	h := home.New(dir)
	for _, q := range []string{"abcdef02", "ABCDEF02", "aBcDeF0"} {
		ms, err := h.FindThread(q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.ThreadID)
		}
		want := []string{"Abcdef02-0000-7000-8000-000000000001", "aBcDeF02-0000-7000-8000-000000000000"}
		if !cmp.Equal(got, want) {
			t.Errorf("FindThread(%s) = %q, want %q", q, got, want)
		}
	}
}
