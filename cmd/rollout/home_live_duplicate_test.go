package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/testkit/conformance"
)

// TestLiveDuplicateOrdinalRepair decides, with real Codex, how a record
// written twice under one ordinal is repaired (issue 35 point 7,
// openai/codex#41079: a projection stalled on two duplicate
// thread_settings_applied). Codex projects the damaged file; then one home
// gets rollout's repair (the copy to quarantine, nothing renumbered) and
// another the renumbering rollout did before (every line from the copy on
// numbered one up). Codex resumes each; what it projects is compared with
// the file. 0.153.4 stops its projection at the copy, 0.171.0 skips it.
func TestLiveDuplicateOrdinalRepair(t *testing.T) {
	versions := []string{"0.153.4", "0.171.0"}
	ran := 0
	for _, v := range versions {
		c, ok := conformance.Installed(v)
		if !ok {
			t.Logf("Codex %s is not installed in %s: skipped", v, conformance.CacheDir())
			continue
		}
		ran++
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			for _, variant := range []string{"quarantine", "renumber"} {
				t.Run(variant, func(t *testing.T) { duplicateOrdinalCase(t, c, variant) })
			}
		})
	}
	if ran == 0 {
		t.Skip("neither Codex " + strings.Join(versions, " nor ") + " is installed (set ROLLOUT_CONFORMANCE_VERSIONS to install one): live test skipped")
	}
}

func duplicateOrdinalCase(t *testing.T, c *conformance.Codex, variant string) {
	ctx := context.Background()
	h, path, id := resumedThread(t, c)
	mustRun := mustCodex(t)
	if p, _ := home.New(h.Dir).ProjectionOf(id); p == nil {
		t.Skipf("Codex %s keeps no projection of this thread: nothing to decide", c.Version)
	}

	// The damage: the second turn's thread_settings_applied written twice,
	// then projected by Codex from the start as its next write does.
	copyLine := duplicateSettings(t, path)
	if _, err := home.New(h.Dir).DeleteProjection(id); err != nil {
		t.Fatal(err)
	}
	mustRun(h.Resume(ctx, id, conformance.Marker+" msg"))
	before, err := home.New(h.Dir).ProjectionOf(id)
	if err != nil {
		t.Fatal(err)
	}
	if before == nil { // the projection stopped before its first commit
		before = &home.ProjectionInfo{}
	}
	t.Logf("Codex %s projected the damaged file up to byte %d (ordinal %d); the copy starts at byte %d", c.Version, before.Cursor.Offset, before.Cursor.Ordinal, copyLine.offset)

	switch variant {
	case "quarantine":
		code, out, e := runRollout("repair", "--write", "--no-backup", path)
		if code != exitOK || !strings.Contains(out, "ordinal/duplicate  to quarantine") {
			t.Fatalf("repair: exit %d\n%s%s", code, out, e)
		}
		if strings.Contains(out, "deleted Codex's projection") != (before.Cursor.Offset > copyLine.offset) {
			t.Errorf("repair deleted the projection: %v, the cursor (%d) past the copy (%d): %v\n%s",
				strings.Contains(out, "deleted Codex's projection"), before.Cursor.Offset, copyLine.offset, before.Cursor.Offset > copyLine.offset, out)
		}
	case "renumber":
		renumberFrom(t, path, copyLine.line)
		if before.Cursor.Offset > copyLine.offset {
			// Bytes under the cursor changed: the projection is stale, and
			// repair deletes it in that case.
			if _, err := home.New(h.Dir).DeleteProjection(id); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustRun(h.Resume(ctx, id, conformance.Marker+" msg"))
	fi, _ := os.Stat(path)
	after, err := home.New(h.Dir).ProjectionOf(id)
	if err != nil || after == nil {
		t.Fatalf("projection after the repair and Codex's next write: %v %v", after, err)
	}
	t.Logf("%s: after Codex's next write its projection ends at byte %d of %d, ordinal %d, %d items, %d turns", variant, after.Cursor.Offset, fi.Size(), after.Cursor.Ordinal, after.Items, after.Turns)
	if after.Cursor.Offset != fi.Size() {
		t.Errorf("%s: Codex's projection stops at byte %d of %d", variant, after.Cursor.Offset, fi.Size())
	}
	homeClean(t, home.New(h.Dir), variant+": after Codex resumed the repaired file")
}

type lineAt struct {
	line   int // 1-based
	offset int64
}

// duplicateSettings writes the last thread_settings_applied record of the
// rollout again right after it (same bytes, same ordinal) and returns
// where the copy is.
func duplicateSettings(t *testing.T, path string) lineAt {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	last := -1
	for i, l := range lines {
		if gjson.Get(l, "payload.type").String() == "thread_settings_applied" {
			last = i
		}
	}
	if last < 1 {
		t.Skip("Codex wrote no thread_settings_applied after the first line: nothing to duplicate")
	}
	var off int64
	for _, l := range lines[:last+1] {
		off += int64(len(l))
	}
	lines = append(lines[:last+1], append([]string{lines[last]}, lines[last+1:]...)...)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return lineAt{line: last + 2, offset: off}
}

// renumberFrom numbers every line from line on one up from the line
// before it: rollout's repair of a duplicate ordinal before issue 35.
func renumberFrom(t *testing.T, path string, line int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	next := gjson.Get(lines[line-2], "ordinal").Int() + 1
	for i := line - 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		s, err := sjson.Set(strings.TrimSuffix(lines[i], "\n"), "ordinal", next)
		if err != nil {
			t.Fatal(err)
		}
		lines[i] = s + "\n"
		next++
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("renumbered lines %d-%d to end at ordinal %s", line, len(lines), strconv.FormatInt(next-1, 10))
}
