//go:build unix

package home_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
	"github.com/rollout-dev/rollout/reconstruct"
)

// The home Codex 0.171.0 made with thread/revert keeps one projection per
// file, each under the file's rollout id, and each fits its own file.
func TestRevertedHomeProjections(t *testing.T) {
	dir := buildHome(t, homegen.Reverted)
	h := home.New(dir)
	for _, tt := range []struct {
		key, file string
	}{
		{homegen.RevertedThread, homegen.RevertedOriginal},
		{homegen.RevertedRollout, homegen.RevertedCurrent},
	} {
		p, err := h.ProjectionOf(tt.key)
		if err != nil || p == nil {
			t.Fatalf("projection %s: %+v, %v", tt.key, p, err)
		}
		if size := fileSize(t, filepath.Join(dir, tt.file)); p.Cursor.Offset != size {
			t.Errorf("projection %s: cursor %d, want the size of %s (%d)", tt.key, p.Cursor.Offset, tt.file, size)
		}
	}
	if fds, _ := filetest.HomeFindings(t, dir); len(fds) != 0 {
		t.Errorf("findings on the home Codex made: %+v", fds)
	}
}

// A cursor carried over from the thread's original file to its current
// one (openai/codex#43744) is reported on the current file and names the
// original as the file it belongs to; a cursor that is no file's end
// names none.
func TestCarriedOverCursorNamesItsFile(t *testing.T) {
	for _, tt := range []struct {
		offset, ordinal int64
		owner           string
	}{
		{27579, 36, homegen.RevertedOriginal}, // the original file's end
		{27579, 35, ""},                       // its size, but not the ordinal after its last record
		{30000, 36, ""},
	} {
		dir := buildHome(t, homegen.Reverted)
		runSQL(t, filepath.Join(dir, "thread_history_1.sqlite"),
			"UPDATE thread_history_projection_state SET next_rollout_byte_offset = "+itoa(tt.offset)+", next_rollout_ordinal = "+itoa(tt.ordinal)+" WHERE thread_id = '"+homegen.RevertedRollout+"'")
		fds, _ := filetest.HomeFindings(t, dir)
		if len(fds) != 1 || fds[0].Rule != "home/projection-past-eof" || fds[0].Path != filepath.Join(dir, homegen.RevertedCurrent) {
			t.Fatalf("cursor %d/%d: findings %+v", tt.offset, tt.ordinal, fds)
		}
		ev := fds[0].Facts.(reconstruct.HomeProjectionPastEOFEvidence)
		want := ""
		if tt.owner != "" {
			want = filepath.Join(dir, tt.owner)
		}
		if ev.BelongsTo != want || ev.ThreadID != homegen.RevertedRollout {
			t.Errorf("cursor %d/%d: evidence %+v, want belongs_to %q", tt.offset, tt.ordinal, ev, want)
		}
		if named := strings.Contains(fds[0].Message, "openai/codex#43744"); named != (want != "") {
			t.Errorf("cursor %d/%d: message %q", tt.offset, tt.ordinal, fds[0].Message)
		}
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// ProjectionKey: the rollout id a reverted file's name carries, else the
// thread id; a name whose thread is not the file's keys nothing of it.
func TestProjectionKey(t *testing.T) {
	for _, tt := range []struct{ path, thread, want string }{
		{homegen.RevertedOriginal, homegen.RevertedThread, homegen.RevertedThread},
		{homegen.RevertedCurrent, homegen.RevertedThread, homegen.RevertedRollout},
		{homegen.RevertedCurrent, strings.ToUpper(homegen.RevertedThread), homegen.RevertedRollout},
		{homegen.RevertedCurrent, "", homegen.RevertedRollout},
		{homegen.RevertedCurrent, homegen.Thread, homegen.Thread},
		{"copy.jsonl", homegen.Thread, homegen.Thread},
	} {
		if got := home.ProjectionKey(tt.path, tt.thread); got != tt.want {
			t.Errorf("ProjectionKey(%s, %s) = %s, want %s", tt.path, tt.thread, got, tt.want)
		}
	}
}
