package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/testkit/conformance"
)

// TestLiveReclaimOfResumedSession: a session real Codex made and resumed,
// with superseded checkpoints and large tool outputs, is reclaimed in
// place (the plan deletes the projection its cuts invalidate);
// reclaim --undo gives back the file byte for byte and the projection row
// for row; reclaimed again, Codex resumes it, rebuilds the history it
// rebuilt before the reclaim, appends to the same file and no other, and
// after that write its projection matches the file: rollout home finds
// nothing and the cursor is at the file's end.
func TestLiveReclaimOfResumedSession(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Codex CLI")
	}
	for _, v := range []string{"0.171.0", "0.169.0"} {
		t.Run(v, func(t *testing.T) { reclaimOfResumedSession(t, installedCodex(t, v)) })
	}
}

func reclaimOfResumedSession(t *testing.T, c *conformance.Codex) {
	ctx := context.Background()
	m := conformance.NewMock()
	defer m.Close()
	h, err := conformance.NewHome(t.TempDir(), c, m)
	if err != nil {
		t.Fatal(err)
	}
	rel, id := reclaimableSession(t, h)
	path := filepath.Join(h.Dir, rel)
	ch := home.New(h.Dir)
	homeClean(t, ch, "the home Codex made")
	// What Codex rebuilds from the file before any reclaim.
	want := rebuiltBy(t, mustCodex(t)(h.Resume(ctx, id, conformance.Marker+" msg")))
	original, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := projectionRows(t, ch, id)
	if len(rows["thread_history_projection_state"]) != 1 || len(rows["thread_items"]) == 0 {
		t.Skipf("Codex %s keeps no projection of this thread: nothing for reclaim to invalidate (%v)", c.Version, rows)
	}

	reclaim := func() {
		t.Helper()
		code, o, e := runRollout("reclaim", "--policy", reclaimPolicies, "--write", path)
		if code != exitOK || !strings.Contains(o, "1 files written") || !strings.Contains(o, "deleted Codex's projection of thread "+id) {
			t.Fatalf("reclaim --write: exit %d\n%s%s", code, o, e)
		}
		fi, _ := os.Stat(path)
		t.Logf("Codex %s: reclaim %s: %d -> %d bytes, %d projected items deleted; Codex rebuilt %d items before", c.Version, reclaimPolicies, len(original), fi.Size(), len(rows["thread_items"]), len(want))
		if got := projectionRows(t, ch, id); len(got["thread_items"])+len(got["thread_history_projection_state"]) != 0 {
			t.Errorf("after reclaim --write the projection is still there: %d items", len(got["thread_items"]))
		}
	}
	reclaim()
	if code, o, e := runRollout("reclaim", "--undo", path); code != exitOK || !strings.Contains(o, "put back Codex's projection") {
		t.Fatalf("reclaim --undo: exit %d\n%s%s", code, o, e)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, original) {
		t.Fatal("reclaim --undo did not give back the file Codex wrote")
	}
	if d := cmp.Diff(rows, projectionRows(t, ch, id)); d != "" {
		t.Fatalf("reclaim --undo did not give back Codex's projection (-before +after):\n%s", d)
	}

	reclaim()
	run := mustCodex(t)(h.Resume(ctx, id, conformance.Marker+" msg"))
	appended := false
	for _, ch := range run.Changes {
		switch {
		case ch.Path == rel && ch.What == "appended":
			appended = true
		case strings.HasSuffix(ch.Path, ".jsonl") && ch.Path != rel:
			t.Errorf("Codex wrote another rollout after the reclaim: %s %s", ch.What, ch.Path)
		}
	}
	if !appended {
		t.Errorf("Codex did not append to the reclaimed file: %+v", run.Changes)
	}
	// The resume before the reclaim sent want and then its new turn; this
	// one must send the same history first.
	got := rebuiltBy(t, run)
	if len(got) < len(want) || !cmp.Equal(got[:len(want)], want) {
		t.Errorf("Codex rebuilt another history from the reclaimed file:\n%s", cmp.Diff(want, got[:min(len(got), len(want))]))
	}
	homeClean(t, ch, "after Codex resumed the reclaimed file")
	fi, _ := os.Stat(path)
	if p, err := ch.ProjectionOf(id); err != nil || p == nil || p.Cursor.Offset != fi.Size() {
		t.Errorf("projection after Codex's next write: %+v (%v), want its cursor at the end (%d)", p, err, fi.Size())
	}
}

// homeClean fails the test with each finding rollout home has.
func homeClean(t *testing.T, h *home.Home, stage string) {
	t.Helper()
	rep, err := home.Check(h, home.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rep.Observations {
		t.Errorf("%s: %s: %T %+v", stage, o.Path, o.Evidence, o.Evidence)
	}
	if rep.Incomplete {
		t.Errorf("%s: incomplete: %v", stage, rep.Notes)
	}
}

// rebuiltBy is the history of the first model request of a resume: its
// input before the resume's prompt (the last scripted prompt in it).
func rebuiltBy(t *testing.T, run *conformance.Run) []string {
	t.Helper()
	reqs := run.Responses()
	if len(reqs) == 0 {
		t.Fatal("the resume sent no model request")
	}
	var keys []string
	cut := 0
	for _, raw := range gjson.GetBytes(reqs[0].Body, "input").Array() {
		it := conformance.ItemOf([]byte(raw.Raw))
		if it.Type == "message" && it.Role == "user" && strings.HasPrefix(it.Text, conformance.Marker) {
			cut = len(keys)
		}
		keys = append(keys, it.String()+" "+it.Sum)
	}
	return keys[:cut]
}

// projectionRows reads every row of the thread's projection tables, as
// text, by table.
func projectionRows(t *testing.T, h *home.Home, thread string) map[string][]string {
	t.Helper()
	d, err := home.OpenDB(h.HistoryDB())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out := map[string][]string{}
	err = d.Read(func(tx *sql.Tx) error {
		for _, table := range []string{"thread_items", "thread_realtime_items", "thread_turns", "thread_history_projection_state"} {
			if cols, err := home.Columns(tx, table); err != nil || cols == nil {
				continue
			}
			rs, err := tx.Query(`SELECT * FROM `+table+` WHERE thread_id = ? ORDER BY rowid`, thread)
			if err != nil {
				return err
			}
			cols, _ := rs.Columns()
			for rs.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rs.Scan(ptrs...); err != nil {
					rs.Close()
					return err
				}
				var b strings.Builder
				for i, v := range vals {
					if bs, ok := v.([]byte); ok {
						v = string(bs)
					}
					fmt.Fprintf(&b, "%s=%v ", cols[i], v)
				}
				out[table] = append(out[table], b.String())
			}
			rs.Close()
			if err := rs.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
