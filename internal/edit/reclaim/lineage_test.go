package reclaim_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/reclaim"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
)

func compactedTree(t *testing.T) (dir, parent, fork string) {
	t.Helper()
	dir = t.TempDir()
	files, err := lineagegen.Write(dir, lineagegen.Compacted)
	if err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(dir, files["parent"].Path), filepath.Join(dir, files["fork"].Path)
}

// A parent a fork continues is not rewritten below the fork's cutoff by
// any policy: superseded-checkpoints (which would shrink it) and
// before-turn refuse it (exit 4 in the command, the error naming the
// fork), dry run and --write alike, and leave every byte of the home as it
// was; compress skips it and the fork, as Codex's compression does. The
// same parent without its fork is reclaimed: the refusal is the fork's.
func TestReferencedParentIsImmutable(t *testing.T) {
	for _, policy := range []string{space.PolicySupersededCheckpoints, space.PolicyBeforeTurn} {
		for _, write := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/write=%v", policy, write), func(t *testing.T) {
				dir, parent, fork := compactedTree(t)
				o := opts(policy)
				o.BeforeTurn = 1
				plan, _, err := reclaim.PlanFile(parent, o)
				if err != nil {
					t.Fatal(err)
				}
				if len(plan.Cuts) == 0 {
					t.Fatalf("%s plans no cut in the parent: the test proves nothing (%+v)", policy, plan.Skipped)
				}
				before := snapshot(t, dir)
				out := reclaim.Run([]string{parent}, o, write)
				var r *inplace.Refusal
				if !errors.As(out[0].Err, &r) || r.Kind != inplace.Referenced || !strings.Contains(r.Error(), fork) {
					t.Fatalf("reclaim of the referenced parent: %v, want a Referenced refusal naming %s", out[0].Err, fork)
				}
				if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(before) {
					t.Errorf("a refused reclaim changed the home:\n%s", names(got))
				}
			})
		}
	}
	t.Run("without the fork", func(t *testing.T) {
		_, parent, fork := compactedTree(t)
		if err := os.Remove(fork); err != nil {
			t.Fatal(err)
		}
		before, _ := os.Stat(parent)
		out := reclaim.Run([]string{parent}, opts(space.PolicySupersededCheckpoints), true)
		if out[0].Err != nil || out[0].Refused != "" {
			t.Fatalf("reclaim of the parent alone: %v %s", out[0].Err, out[0].Refused)
		}
		if after, _ := os.Stat(parent); after.Size() >= before.Size() {
			t.Errorf("the parent alone was not reclaimed: %d -> %d bytes", before.Size(), after.Size())
		}
	})
	t.Run("compress", func(t *testing.T) {
		_, parent, fork := compactedTree(t)
		for path, want := range map[string]string{parent: "referenced: " + fork, fork: "a fork pointer"} {
			plan, _, err := reclaim.PlanFile(path, opts(space.PolicyCompress))
			if err != nil {
				t.Fatal(err)
			}
			if plan.Compress || !strings.HasPrefix(plan.Skipped[space.PolicyCompress], want) {
				t.Errorf("%s: compress %v, skipped %q; want skipped %q...", filepath.Base(path), plan.Compress, plan.Skipped[space.PolicyCompress], want)
			}
		}
	})
}

// An undo is a write too: a parent reclaimed before it was forked cannot
// be put back once a fork continues the reclaimed bytes.
func TestUndoRefusesReferencedFile(t *testing.T) {
	dir, parent, fork := compactedTree(t)
	data, err := os.ReadFile(fork)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(fork); err != nil {
		t.Fatal(err)
	}
	reclaimAll(t, []string{parent}, opts(space.PolicySupersededCheckpoints))
	// A fork of the reclaimed parent, at its new end.
	fi, _ := os.Stat(parent)
	data = []byte(strings.Replace(string(data), `"end_byte_offset":`, `"end_byte_offset":`+fmt.Sprint(fi.Size())+`,"was":`, 1))
	if err := os.WriteFile(fork, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	_, err = reclaim.Undo(parent, reclaim.UndoOptions{})
	var r *inplace.Refusal
	if !errors.As(err, &r) || r.Kind != inplace.Referenced {
		t.Fatalf("undo of a parent a fork now continues: %v, want a Referenced refusal", err)
	}
	if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Error("a refused undo changed files")
	}
}
