package repair_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

// TestRepairUndoNeverEscapes: a FILE.repair-undo.json written by anyone who
// can write the sessions directory names files outside FILE's own
// artifacts. Undo refuses it (exit 4) and touches nothing: not the victim,
// not FILE, not the record.
func TestRepairUndoNeverEscapes(t *testing.T) {
	sum := filetest.SHA256([]byte(filetest.EscapeRollout))
	victim := filetest.EscapeVictim
	for _, inHome := range []bool{false, true} {
		for name, rec := range map[string]func(root, path string) string{
			"backup-parent": func(root, path string) string {
				return fmt.Sprintf(`{"version":1,"file":%q,"size":%d,"sha256":%q,"backup":"../victim"}`, filepath.Base(path), len(filetest.EscapeRollout), sum)
			},
			"backup-absolute": func(root, path string) string {
				return fmt.Sprintf(`{"version":1,"file":%q,"size":%d,"sha256":%q,"backup":%q}`, filepath.Base(path), len(filetest.EscapeRollout), sum, filepath.Join(root, "victim"))
			},
			"backup-sibling": func(root, path string) string {
				return fmt.Sprintf(`{"version":1,"file":%q,"size":%d,"sha256":%q,"backup":"other.jsonl"}`, filepath.Base(path), len(filetest.EscapeRollout), sum)
			},
			"quarantine-deleted": func(root, path string) string {
				os.WriteFile(path+".bak", []byte(filetest.EscapeRollout), 0o644)
				return fmt.Sprintf(`{"version":1,"file":%q,"size":%d,"sha256":%q,"backup":%q,"quarantine":"../victim","quarantine_before":{"existed":false,"size":0,"sha256":""},"quarantine_after_size":%d}`,
					filepath.Base(path), len(filetest.EscapeRollout), sum, filepath.Base(path)+".bak", len(victim))
			},
			"quarantine-truncated": func(root, path string) string {
				os.WriteFile(path+".bak", []byte(filetest.EscapeRollout), 0o644)
				return fmt.Sprintf(`{"version":1,"file":%q,"size":%d,"sha256":%q,"backup":%q,"quarantine":"../victim","quarantine_before":{"existed":true,"size":0,"sha256":%q},"quarantine_after_size":%d}`,
					filepath.Base(path), len(filetest.EscapeRollout), sum, filepath.Base(path)+".bak", filetest.SHA256(nil), len(victim))
			},
		} {
			t.Run(fmt.Sprintf("%s/home=%v", name, inHome), func(t *testing.T) {
				root, _, path := filetest.EscapeSetup(t, inHome)
				os.WriteFile(path+".repair-undo.json", []byte(rec(root, path)), 0o600)
				before := filetest.Tree(t, root)
				_, err := repair.Undo(path, repair.UndoOptions{})
				if r := refusalOf(nil, err); !refusedUnsafe(r) {
					t.Errorf("Undo: %v, want a refusal (exit 4)", err)
				}
				if diff := cmp.Diff(before, filetest.Tree(t, root)); diff != "" {
					t.Errorf("a refused undo changed files (-before +after):\n%s", diff)
				}
			})
		}
	}
}
