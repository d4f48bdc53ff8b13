//go:build unix

package repair_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

// swapForSymlink moves the store's sessions directory aside and puts in
// its place a symlink to a tree outside the home (with the same
// subdirectories), as a user who can write the store would between
// rollout's check and its use. It returns the outside tree.
func swapForSymlink(t *testing.T, root, path string) string {
	t.Helper()
	place, err := artifacts.For(path)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(filepath.Join(root, artifacts.StoreDir, "sessions"), place.Dir)
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(outside, rel), 0o700); err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(root, artifacts.StoreDir, "sessions")
	if err := os.Rename(sessions, filepath.Join(root, "moved-aside")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, sessions); err != nil {
		t.Fatal(err)
	}
	return outside
}

// filesUnder lists the files (not directories) under dir.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestRepairStoreSwappedDuringWrite: the store is swapped for a symlink
// right after repair made its temporary files there (the forced window
// between the check and the backup, the quarantine and the undo record).
// Nothing is written through the symlink: every artifact is made relative
// to the directory repair opened and checked.
func TestRepairStoreSwappedDuringWrite(t *testing.T) {
	root, path := filetest.CodexHomeWithTear(t)
	var outside string
	seen := map[string]bool{} // files under outside at any later stage
	o, r, err := writeInPlace(path, func(stage string) {
		if stage == "written" {
			outside = swapForSymlink(t, root, path)
		}
		if outside != "" {
			for _, f := range filesUnder(t, outside) {
				seen[f] = true
			}
		}
	})
	if err != nil && r == nil {
		t.Fatal(err)
	}
	if outside == "" {
		t.Fatalf("the stage was never reached (refusal %v)", r)
	}
	for _, f := range filesUnder(t, outside) {
		seen[f] = true
	}
	if len(seen) > 0 {
		t.Errorf("repair wrote through the swapped store: %v", seen)
	}
	if r == nil && o.Backup == "" {
		t.Error("no backup was kept")
	}
}

// TestRepairUndoStoreSwapped: between undo's checks and its rename, the
// store is swapped for a symlink to a tree holding a decoy backup and
// record. Undo renames the backup it checked, removes the record it read,
// and never touches the decoy tree.
func TestRepairUndoStoreSwapped(t *testing.T) {
	root, path := filetest.CodexHomeWithTear(t)
	original := filetest.Read(t, path)
	if o, r, err := writeInPlace(path, nil); err != nil || r != nil || o.Backup == "" {
		t.Fatalf("repair: %v %v", err, r)
	}
	place, _ := artifacts.For(path)
	var outside string
	var decoy map[string]string
	_, err := repair.Undo(path, repair.UndoOptions{Stage: func(stage string) {
		if stage != "checked" {
			return
		}
		outside = swapForSymlink(t, root, path)
		rel, _ := filepath.Rel(filepath.Join(root, artifacts.StoreDir, "sessions"), place.Dir)
		for _, name := range []string{filepath.Base(place.Backup(0)), filepath.Base(place.UndoRecord()), filepath.Base(place.Quarantine())} {
			os.WriteFile(filepath.Join(outside, rel, name), []byte("decoy\n"), 0o600)
		}
		decoy = filetest.Tree(t, outside)
	}})
	if err != nil {
		t.Fatalf("undo: %v", err)
	}
	if outside == "" {
		t.Fatal("the stage was never reached")
	}
	if diff := cmp.Diff(decoy, filetest.Tree(t, outside)); diff != "" {
		t.Errorf("undo changed the tree the swapped store points to (-before +after):\n%s", diff)
	}
	if got := filetest.Read(t, path); string(got) != string(original) {
		t.Errorf("undo did not restore the file from the backup it checked: %q", got)
	}
}

// needRoot skips a test that gives files to another user.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("giving a directory to another user needs root (the suite runs as root in CI)")
	}
}

// nobody is the uid the ownership tests give directories to.
const nobody = 65534

// TestRepairRefusesStoreOfAnotherUser: a store (or a directory in it)
// that belongs to another user, or that others may write, is refused
// before anything is made, naming the directory and its owner; one that
// belongs to the home's owner is used.
func TestRepairRefusesStoreOfAnotherUser(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		name  string
		dir   string // under the store
		uid   int
		mode  os.FileMode
		want  string // in the refusal ("": none)
		owner bool   // the home belongs to uid too
	}{
		{name: "planted", dir: ".", uid: nobody, mode: 0o777, want: "uid 65534"},
		{name: "foreign", dir: ".", uid: nobody, mode: 0o700, want: "uid 65534"},
		{name: "foreign-subdirectory", dir: "sessions/2026", uid: nobody, mode: 0o700, want: "uid 65534"},
		{name: "writable-by-others", dir: ".", uid: 0, mode: 0o777, want: "writable by others"},
		{name: "sticky", dir: "sessions", uid: 0, mode: 0o1777, want: "writable by others"},
		{name: "group-writable", dir: ".", uid: 0, mode: 0o770, want: "writable by others"},
		{name: "the-home-owner's", dir: ".", uid: nobody, mode: 0o700, owner: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, path := filetest.CodexHomeWithTear(t)
			dir := filepath.Join(root, artifacts.StoreDir, filepath.FromSlash(tc.dir))
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			os.Chown(dir, tc.uid, tc.uid)
			os.Chmod(dir, tc.mode)
			if tc.owner {
				os.Chown(root, tc.uid, tc.uid)
			}
			before := filetest.Tree(t, root)
			o, r, err := writeInPlace(path, nil)
			if tc.want == "" {
				if err != nil || r != nil || o.Backup == "" {
					t.Fatalf("a store of the home's owner was refused: %v %v", err, r)
				}
				return
			}
			if r == nil || r.Kind != inplace.UnsafeStore {
				t.Fatalf("repair: %v %v, want a refusal of kind UnsafeStore", err, r)
			}
			if !refusedUnsafe(r) || !strings.Contains(r.Error(), dir) || !strings.Contains(r.Error(), tc.want) {
				t.Errorf("the refusal does not name %s and %q: %v", dir, tc.want, r)
			}
			if diff := cmp.Diff(before, filetest.Tree(t, root)); diff != "" {
				t.Errorf("a refused repair changed files (-before +after):\n%s", diff)
			}
		})
	}
}

// TestRepairUndoRefusesStoreOfAnotherUser: undo never reads a record, nor
// renames a backup, from a store another user took over after the repair.
func TestRepairUndoRefusesStoreOfAnotherUser(t *testing.T) {
	needRoot(t)
	root, path := filetest.CodexHomeWithTear(t)
	if o, r, err := writeInPlace(path, nil); err != nil || r != nil || o.Backup == "" {
		t.Fatalf("repair: %v %v", err, r)
	}
	store := filepath.Join(root, artifacts.StoreDir)
	os.Chown(store, nobody, nobody)
	before := filetest.Tree(t, root)
	_, err := repair.Undo(path, repair.UndoOptions{})
	var r *inplace.Refusal
	if !errors.As(err, &r) || r.Kind != inplace.UnsafeStore || !strings.Contains(r.Error(), store) {
		t.Fatalf("undo: %v, want a refusal of kind UnsafeStore naming %s", err, store)
	}
	if diff := cmp.Diff(before, filetest.Tree(t, root)); diff != "" {
		t.Errorf("a refused undo changed files (-before +after):\n%s", diff)
	}
}

// TestRepairNoBackupKeepsALateWriter: a Codex-like writer takes the
// thread's writer lock during the final rename of repair --write
// --no-backup, appends a line to the descriptor it already had, and goes
// on appending after the repair is done. Nothing is lost: the replaced
// inode is kept in the store, holding both lines, and the outcome says
// from which offset they belong to the file.
func TestRepairNoBackupKeepsALateWriter(t *testing.T) {
	root, path := filetest.CodexHomeWithTear(t)
	read := int64(len(filetest.Read(t, path)))
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	first := `{"timestamp":"2026-12-01T20:32:00.000Z","type":"event_msg","payload":{"type":"agent_message","message":"during the rename"}}` + "\n"
	second := strings.Replace(first, "during the rename", "after the repair", 1)
	o, _, err := repairWrite(repair.Options{Path: path, Write: true, NoBackup: true, Stage: func(stage string) {
		if stage == inplace.StageSwitch {
			lock := filetest.Flock(t, filepath.Join(root, home.WriterLocksDir, homegen.Thread+".lock"))
			fmt.Fprintf(lock, "pid=%d\n", os.Getpid())
			w.WriteString(first)
		}
	}})
	if err != nil || o.Refusal != nil {
		t.Fatalf("repair: %v %v", err, o.Refusal)
	}
	w.WriteString(second)
	l := o.Late
	if l == nil || !l.Inode || !l.Writer || l.From != read || l.Bytes != int64(len(first)) {
		t.Fatalf("late %+v: want the replaced inode kept, a writer, the line from offset %d", l, read)
	}
	kept := filetest.Read(t, l.Kept)
	if got := string(kept[min(l.From, int64(len(kept))):]); got != first+second {
		t.Errorf("the kept inode holds %q after offset %d, want both lines", got, l.From)
	}
	if !strings.Contains(l.Error(), fmt.Sprintf("tail -c +%d %s >> %s", read+1, l.Kept, path)) {
		t.Errorf("the error does not give the command that puts every late line back: %v", l)
	}
}

// TestRepairNoBackupLeavesNothingWithoutAWriter: the fixture that must
// not trigger: with nobody writing, --no-backup leaves no copy of the
// replaced file.
func TestRepairNoBackupLeavesNothingWithoutAWriter(t *testing.T) {
	root, path := filetest.CodexHomeWithTear(t)
	o, _, err := repairWrite(repair.Options{Path: path, Write: true, NoBackup: true})
	if err != nil || o.Refusal != nil || o.Late != nil {
		t.Fatalf("repair: %v %v %v", err, o.Refusal, o.Late)
	}
	for _, f := range filesUnder(t, filepath.Join(root, artifacts.StoreDir)) {
		if strings.Contains(filepath.Base(f), ".bak") {
			t.Errorf("--no-backup left %s", f)
		}
	}
}
