package reclaim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/edit/reclaim"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

// TestReclaimUndoNeverEscapes: the archive's last line names the original
// and the result; a crafted one names files elsewhere. Undo derives both
// names from FILE, refuses the archive (exit 4) and touches nothing.
func TestReclaimUndoNeverEscapes(t *testing.T) {
	sum := filetest.SHA256([]byte(filetest.EscapeRollout))
	for _, inHome := range []bool{false, true} {
		for name, trailer := range map[string]func(root, path string) string{
			"path-parent": func(root, path string) string {
				return fmt.Sprintf(`{"reclaimed":1,"path":"../outside","result":%q,"policies":["duplicate-exec-output"],"original_sha256":%q,"result_sha256":%q,"result_compressed":false,"cuts":0}`, filepath.Base(path), sum, sum)
			},
			"path-absolute": func(root, path string) string {
				return fmt.Sprintf(`{"reclaimed":1,"path":%q,"result":%q,"policies":["duplicate-exec-output"],"original_sha256":%q,"result_sha256":%q,"result_compressed":false,"cuts":0}`, filepath.Join(root, "outside"), filepath.Base(path), sum, sum)
			},
			"result-victim": func(root, path string) string {
				v := filetest.SHA256([]byte(filetest.EscapeVictim))
				return fmt.Sprintf(`{"reclaimed":1,"path":%q,"result":"../../victim","policies":["duplicate-exec-output"],"original_sha256":%q,"result_sha256":%q,"result_compressed":false,"cuts":0}`, filepath.Base(path), v, v)
			},
			"path-sibling": func(root, path string) string {
				return fmt.Sprintf(`{"reclaimed":1,"path":"other.jsonl","result":%q,"policies":["duplicate-exec-output"],"original_sha256":%q,"result_sha256":%q,"result_compressed":false,"cuts":0}`, filepath.Base(path), sum, sum)
			},
		} {
			t.Run(fmt.Sprintf("%s/home=%v", name, inHome), func(t *testing.T) {
				root, _, path := filetest.EscapeSetup(t, inHome)
				os.WriteFile(path+".reclaimed.jsonl.zst", filetest.Zstd(t, []byte(trailer(root, path)+"\n")), 0o600)
				before := filetest.Tree(t, root)
				res, err := reclaim.Undo(path, reclaim.UndoOptions{})
				if diff := cmp.Diff(before, filetest.Tree(t, root)); diff != "" {
					t.Errorf("a refused undo changed files (-before +after):\n%s", diff)
				}
				if err == nil || res != nil {
					t.Errorf("not refused (exit 4, nothing restored): %+v, %v", res, err)
				}
			})
		}
	}
}
