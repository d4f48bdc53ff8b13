package reclaim_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/reclaim"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
	"github.com/rollout-dev/rollout/rollout"
)

// projectedHome is a Codex home holding a rollout with compactions to
// reclaim, and a history database whose projection of it reaches its end.
func projectedHome(t *testing.T) (root, path string) {
	t.Helper()
	root = t.TempDir()
	files, err := lineagegen.Write(root, lineagegen.Compacted) // under root/sessions
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(root, files["parent"].Path)
	if err := os.Remove(filepath.Join(root, files["fork"].Path)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, ".tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	key := home.ProjectionKey(path, rollout.MetaThreadID(path))
	schema := fmt.Sprintf(`CREATE TABLE thread_history_projection_state (thread_id TEXT PRIMARY KEY, next_rollout_byte_offset INTEGER NOT NULL, next_rollout_ordinal INTEGER NOT NULL);
CREATE TABLE thread_turns (thread_id TEXT NOT NULL, turn_id TEXT NOT NULL);
CREATE TABLE thread_items (thread_id TEXT NOT NULL, item_json TEXT NOT NULL);
INSERT INTO thread_history_projection_state VALUES ('%s', %d, 9);
INSERT INTO thread_turns VALUES ('%[1]s', 'turn-1');`, key, fi.Size())
	if err := homegen.Exec(filepath.Join(root, "thread_history_1.sqlite"), schema); err != nil {
		t.Fatal(err)
	}
	if p, err := home.New(root).ProjectionOf(key); err != nil || p == nil {
		t.Fatalf("the home has no projection to go stale: %+v %v", p, err)
	}
	return root, path
}

// reclaim --write refuses (HistoryUnreadable, exit 4 in the command) a cut
// before the projection's cursor when the history database cannot be
// read, and touches nothing; an absent database lets it go ahead, and a
// readable one has its stale projection deleted.
func TestReclaimRefusesUnreadableHistory(t *testing.T) {
	o := opts(space.PolicySupersededCheckpoints)
	for _, s := range homegen.Spoilages {
		t.Run(s.String(), func(t *testing.T) {
			root, path := projectedHome(t)
			filetest.SpoilHistory(t, root, s)
			before := snapshot(t, filepath.Join(root, "sessions"))
			out := reclaim.Run([]string{path}, o, true)
			var r *inplace.Refusal
			if !errors.As(out[0].Err, &r) || r.Kind != inplace.HistoryUnreadable {
				t.Fatalf("reclaim --write: %v, want a HistoryUnreadable refusal", out[0].Err)
			}
			if got := snapshot(t, filepath.Join(root, "sessions")); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Errorf("a refused reclaim changed the sessions:\n%s", names(got))
			}
		})
	}
	for _, absent := range []bool{false, true} {
		t.Run(fmt.Sprintf("absent=%v", absent), func(t *testing.T) {
			root, path := projectedHome(t)
			if absent {
				os.Remove(filepath.Join(root, "thread_history_1.sqlite"))
			}
			out := reclaim.Run([]string{path}, o, true)
			if out[0].Err != nil || out[0].Refused != "" || !out[0].Result.Written {
				t.Fatalf("reclaim --write: %v %q", out[0].Err, out[0].Refused)
			}
			if p := out[0].Result.Projection; absent != (p == nil) || (p != nil && !p.Deleted) {
				t.Errorf("projection plan %+v (absent database: %v)", p, absent)
			}
		})
	}
}

// reclaim --undo refuses the same way before it puts the original back.
func TestReclaimUndoRefusesUnreadableHistory(t *testing.T) {
	for _, s := range homegen.Spoilages {
		t.Run(s.String(), func(t *testing.T) {
			root, path := projectedHome(t)
			reclaimAll(t, []string{path}, opts(space.PolicySupersededCheckpoints))
			filetest.SpoilHistory(t, root, s)
			before := snapshot(t, filepath.Join(root, "sessions"))
			_, err := reclaim.Undo(path, reclaim.UndoOptions{})
			var r *inplace.Refusal
			if !errors.As(err, &r) || r.Kind != inplace.HistoryUnreadable {
				t.Fatalf("reclaim --undo: %v, want a HistoryUnreadable refusal", err)
			}
			if got := snapshot(t, filepath.Join(root, "sessions")); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Errorf("a refused undo changed the sessions:\n%s", names(got))
			}
		})
	}
}
