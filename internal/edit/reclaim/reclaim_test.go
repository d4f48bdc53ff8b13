package reclaim_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/edit/reclaim"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/bloatgen"
)

// snapshot maps every file under dir to the hash of its bytes.
func snapshot(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = sha256.Sum256(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func names(m map[string][32]byte) string {
	var n []string
	for k := range m {
		n = append(n, filepath.Base(k))
	}
	sort.Strings(n)
	return strings.Join(n, "\n")
}

// opts selects policies; before-turn keeps the last 3 user turns.
func opts(policies ...string) reclaim.Options {
	return reclaim.Options{Policies: policies, Now: time.Now().Add(time.Hour), BeforeTurn: 3}
}

// reclaimAll plans, prepares in place and commits every path.
func reclaimAll(t *testing.T, paths []string, o reclaim.Options) []*reclaim.Result {
	t.Helper()
	var out []*reclaim.Result
	for _, p := range paths {
		plan, _, err := reclaim.PlanFile(p, o)
		if err != nil {
			t.Fatal(err)
		}
		pend, err := reclaim.Prepare(plan, o, true)
		if err != nil {
			t.Fatal(err)
		}
		if pend.Result.Refused() {
			t.Fatalf("%s refused: %+v %+v", p, pend.Result.StateChanges, pend.Result.NewFindings)
		}
		if err := pend.Commit(); err != nil {
			t.Fatal(err)
		}
		pend.Discard()
		out = append(out, pend.Result)
	}
	return out
}

// For every policy set and generated thread tree: resume state identical,
// bytes freed, a second run plans nothing, undo restores every byte, and a
// rerun after undo writes the same bytes again.
func TestReclaimProperties(t *testing.T) {
	shapes := []bloatgen.Options{
		{},
		{Turns: 9, CompactEach: 2, Images: 3, ImageBytes: 7000, SubAgents: 1},
		{Turns: 4, NoCompaction: true, SubAgents: 3, SubTurns: 2},
	}
	policySets := [][]string{
		{space.PolicySupersededCheckpoints},
		{space.PolicyDuplicateExecOutput},
		{space.PolicyCompress},
		{space.PolicyBeforeTurn},
		{space.PolicySupersededCheckpoints, space.PolicyDuplicateExecOutput, space.PolicyCompress, space.PolicyBeforeTurn},
	}
	for si, shape := range shapes {
		for _, ps := range policySets {
			t.Run(fmt.Sprintf("shape%d/%s", si, strings.Join(ps, "+")), func(t *testing.T) {
				dir := t.TempDir()
				paths, err := bloatgen.Write(dir, shape)
				if err != nil {
					t.Fatal(err)
				}
				orig := snapshot(t, dir)
				o := opts(ps...)
				results := reclaimAll(t, paths, o)
				var before, after int64
				for _, r := range results {
					before += r.Plan.DiskBytes
					after += r.BytesAfter
					if !r.Identical {
						t.Errorf("%s: state differs", r.Plan.Path)
					}
				}
				applies := len(ps) > 1 || (ps[0] != space.PolicySupersededCheckpoints && ps[0] != space.PolicyBeforeTurn) || !shape.NoCompaction
				if applies && after >= before {
					t.Errorf("%v freed nothing: %d -> %d bytes", ps, before, after)
				}
				written := snapshot(t, dir)

				// A second run plans nothing.
				for _, r := range results {
					plan, _, err := reclaim.PlanFile(r.OutPath, o)
					if err != nil {
						t.Fatal(err)
					}
					if len(plan.Cuts) > 0 || plan.Compress {
						t.Errorf("%s: second run plans %d cuts, compress=%v", r.OutPath, len(plan.Cuts), plan.Compress)
					}
				}
				// Undo restores every byte and leaves no archive.
				for _, r := range results {
					if !r.Written {
						continue
					}
					if _, err := reclaim.Undo(r.OutPath, reclaim.UndoOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(orig) {
					t.Fatalf("undo left\n%s\nwant\n%s", names(got), names(orig))
				}
				// Determinism: the same input gives the same bytes.
				reclaimAll(t, paths, o)
				if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(written) {
					t.Errorf("a second reclaim of the same input wrote other bytes")
				}
			})
		}
	}
}

// A cut that changes what resume rebuilds is refused, and nothing is written.
func TestProofRefusesStateChange(t *testing.T) {
	dir := t.TempDir()
	paths, err := bloatgen.Write(dir, bloatgen.Options{Turns: 4, SubAgents: 0})
	if err != nil {
		t.Fatal(err)
	}
	o := opts(space.PolicySupersededCheckpoints)
	plan, _, err := reclaim.PlanFile(paths[0], o)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Cuts) != 3 {
		t.Fatalf("want 3 superseded compactions, got %d", len(plan.Cuts))
	}
	// Also empty the newest compaction: that loses the live history.
	data, _ := os.ReadFile(paths[0])
	i := bytes.LastIndex(data, []byte(`"replacement_history":[`)) + len(`"replacement_history":`)
	lineStart := bytes.LastIndexByte(data[:i], '\n') + 1
	end := bytes.Index(data[i:], []byte(`],"window_number"`)) + i + 1
	plan.Cuts = append(plan.Cuts, space.Cut{Policy: space.PolicySupersededCheckpoints, LineOffset: int64(lineStart),
		Start: i - lineStart, End: end - lineStart, Repl: "[]", Path: "payload.replacement_history"})
	before := snapshot(t, dir)
	pend, err := reclaim.Prepare(plan, o, true)
	if err != nil {
		t.Fatal(err)
	}
	defer pend.Discard()
	var changed []string
	for _, c := range pend.Result.StateChanges {
		changed = append(changed, c.Path)
	}
	if !pend.Result.Refused() || pend.Result.Identical || !strings.Contains(strings.Join(changed, " "), "history") {
		t.Fatalf("refused=%v identical=%v changes: %+v", pend.Result.Refused(), pend.Result.Identical, pend.Result.StateChanges)
	}
	if err := pend.Commit(); err == nil {
		t.Fatal("a refused reclaim committed")
	}
	pend.Discard()
	if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("a refused reclaim changed files:\n%s", names(got))
	}
}

// Undo refuses a file that changed after reclaim wrote it.
func TestUndoRefusesChangedFile(t *testing.T) {
	dir := t.TempDir()
	paths, err := bloatgen.Write(dir, bloatgen.Options{Turns: 3, SubAgents: 0})
	if err != nil {
		t.Fatal(err)
	}
	reclaimAll(t, paths, opts(space.PolicyDuplicateExecOutput))
	f, err := os.OpenFile(paths[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"timestamp":"2026-03-10T10:00:00.000Z","ordinal":99,"type":"event_msg","payload":{"type":"agent_message","message":"later"}}` + "\n")
	f.Close()
	before := snapshot(t, dir)
	if _, err := reclaim.Undo(paths[0], reclaim.UndoOptions{}); !errors.Is(err, reclaim.ErrChangedSinceReclaim) {
		t.Fatalf("undo of a changed file: %v", err)
	}
	if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Error("a refused undo changed files")
	}
}

// compress writes a zstd file whose content is the original's, and only for
// cold files.
func TestCompressPolicy(t *testing.T) {
	dir := t.TempDir()
	paths, err := bloatgen.Write(dir, bloatgen.Options{Turns: 3, SubAgents: 0})
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(paths[0])
	hot := reclaim.Options{Policies: []string{space.PolicyCompress}, Now: time.Now(), ColdAfter: 24 * time.Hour}
	plan, _, err := reclaim.PlanFile(paths[0], hot)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Compress || plan.Skipped[space.PolicyCompress] == "" {
		t.Fatalf("a file modified just now is compressed: %+v", plan)
	}
	reclaimAll(t, paths, opts(space.PolicyCompress))
	if _, err := os.Stat(paths[0]); !os.IsNotExist(err) {
		t.Errorf("the plain file is still there: %v", err)
	}
	zf, err := os.Open(paths[0] + ".zst")
	if err != nil {
		t.Fatal(err)
	}
	defer zf.Close()
	dec, _ := zstd.NewReader(zf)
	got, err := io.ReadAll(dec)
	if err != nil || !bytes.Equal(got, orig) {
		t.Fatalf("decompressed content differs (err %v)", err)
	}
}

// A rollback after the newest compaction keeps every checkpoint.
func TestRollbackKeepsCheckpoints(t *testing.T) {
	dir := t.TempDir()
	paths, err := bloatgen.Write(dir, bloatgen.Options{Turns: 3, SubAgents: 0})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(paths[0], os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"timestamp":"2026-03-10T10:00:00.000Z","ordinal":40,"type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":1}}` + "\n")
	f.Close()
	plan, _, err := reclaim.PlanFile(paths[0], opts(space.PolicySupersededCheckpoints))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Cuts) != 0 || !strings.Contains(plan.Skipped[space.PolicySupersededCheckpoints], "rollback") {
		t.Errorf("cuts %d, skipped %q", len(plan.Cuts), plan.Skipped)
	}
}

// The new file keeps the mode; symlinks and non-regular archives are refused.
func TestReclaimKeepsModeRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	paths, err := bloatgen.Write(dir, bloatgen.Options{Turns: 3, SubAgents: 0})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(paths[0], 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "rollout-link.jsonl")
	if err := os.Symlink(paths[0], link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reclaim.PlanFile(link, opts(space.PolicyDuplicateExecOutput)); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a symlink was planned: %v", err)
	}
	reclaimAll(t, paths, opts(space.PolicyDuplicateExecOutput))
	fi, err := os.Stat(paths[0])
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after reclaim: %v %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(reclaim.ArchivePath(paths[0])); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("the archive is readable by others: %v %v", fi.Mode(), err)
	}
	if _, err := reclaim.Undo(paths[0], reclaim.UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	// An archive path that is a FIFO is refused, not opened.
	if err := syscall.Mkfifo(reclaim.ArchivePath(paths[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reclaim.PlanFile(paths[0], opts(space.PolicyDuplicateExecOutput)); err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("a FIFO archive was accepted: %v", err)
	}
}
