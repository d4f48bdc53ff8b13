//go:build unix

package reclaim_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/reclaim"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/bloatgen"
)

// TestReclaimRefusesStoreOfAnotherUser: reclaim --write and --undo refuse
// a store that another user owns (naming it and its owner) or that others
// may write, and change nothing; a store of the home's owner is used.
func TestReclaimRefusesStoreOfAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a directory to another user needs root (the suite runs as root in CI)")
	}
	const nobody = 65534
	refused := func(t *testing.T, err error, store, want string) {
		t.Helper()
		var r *inplace.Refusal
		if !errors.As(err, &r) || r.Kind != inplace.UnsafeStore || !strings.Contains(err.Error(), store) || !strings.Contains(err.Error(), want) {
			t.Errorf("%v, want a refusal of kind UnsafeStore naming %s and %q", err, store, want)
		}
	}
	for _, tc := range []struct {
		name string
		uid  int
		mode os.FileMode
		want string
	}{
		{"foreign", nobody, 0o700, "uid 65534"},
		{"writable-by-others", 0, 0o777, "writable by others"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			paths, err := bloatgen.Write(dir, bloatgen.Options{Turns: 3, SubAgents: 0})
			if err != nil {
				t.Fatal(err)
			}
			o := opts(space.PolicyDuplicateExecOutput)
			store := filepath.Join(dir, artifacts.StoreDir)

			// --write
			os.Mkdir(store, 0o700)
			os.Chown(store, tc.uid, tc.uid)
			os.Chmod(store, tc.mode)
			before := snapshot(t, dir)
			plan, _, err := reclaim.PlanFile(paths[0], o)
			if err != nil {
				t.Fatal(err)
			}
			pend, err := reclaim.Prepare(plan, o, true)
			if err == nil {
				pend.Discard()
			}
			refused(t, err, store, tc.want)
			if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Errorf("a refused reclaim changed files:\n%s", names(got))
			}

			// --undo, after a reclaim with a store of the home's owner
			os.Chown(store, 0, 0)
			os.Chmod(store, 0o700)
			reclaimAll(t, paths[:1], o)
			os.Chown(store, tc.uid, tc.uid)
			os.Chmod(store, tc.mode)
			before = snapshot(t, dir)
			_, err = reclaim.Undo(paths[0], reclaim.UndoOptions{})
			refused(t, err, store, tc.want)
			if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Errorf("a refused undo changed files:\n%s", names(got))
			}
		})
	}
}
