package repair

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
)

// dropFirstID removes the id of the first assistant message at or after
// byte from of the file: item/missing-id, which repair fixes in place.
func dropFirstID(t *testing.T, path string, from int) {
	t.Helper()
	data := read(t, path)
	re := regexp.MustCompile(`"id":"msg_[0-9a-f-]+","role":"assistant"`)
	loc := re.FindIndex(data[from:])
	if loc == nil {
		t.Fatalf("no assistant message after byte %d of %s", from, path)
	}
	at := from + loc[0]
	data = append(data[:at:at], append([]byte(`"role":"assistant"`), data[from+loc[1]:]...)...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A repair in place of a rollout that forks continue is refused when it
// would change a byte below a cutoff (the fork and the revert of the
// standard tree continue the parent), in a dry run as with --write, and
// leaves the file as it was; it goes ahead when every change lies past
// every cutoff, and with -o OUT, which does not touch the file.
func TestRepairRefusesReferencedBytes(t *testing.T) {
	dir := t.TempDir()
	files, err := lineagegen.Write(dir, lineagegen.Standard)
	if err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(dir, files["parent"].Path)
	dropFirstID(t, parent, 0)
	before := read(t, parent)
	for _, write := range []bool{false, true} {
		opts := options(parent)
		opts.Write = write
		out, err := run(t, opts)
		if err != nil {
			t.Fatal(err)
		}
		if out.Refusal == nil || out.Refusal.Kind != inplace.Referenced || out.Wrote {
			t.Fatalf("write=%v: refusal %v, wrote %v; want a Referenced refusal", write, out.Refusal, out.Wrote)
		}
		for _, child := range []string{"fork", "revert"} {
			if !strings.Contains(out.Refusal.Error(), files[child].Path) {
				t.Errorf("the refusal does not name the %s: %v", child, out.Refusal)
			}
		}
		if !bytes.Equal(read(t, parent), before) {
			t.Fatalf("write=%v: a refused repair changed the parent", write)
		}
	}
	opts := options(parent)
	opts.Output = filepath.Join(t.TempDir(), "out.jsonl")
	if out, err := run(t, opts); err != nil || out.Refusal != nil || !out.Wrote {
		t.Fatalf("repair -o OUT of a referenced file: %v %v, wrote %v", err, out.Refusal, out != nil && out.Wrote)
	}

	// Past every cutoff: a turn appended to the parent after the forks were
	// made, damaged the same way.
	dir = t.TempDir()
	files, err = lineagegen.Write(dir, lineagegen.Standard)
	if err != nil {
		t.Fatal(err)
	}
	parent = filepath.Join(dir, files["parent"].Path)
	data := read(t, parent)
	end := len(data)
	lines := bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	var turn []byte
	for _, l := range lines[len(lines)-9:] { // the last turn, renumbered after the end
		turn = append(turn, l...)
	}
	next := files["parent"].Ordinals
	turn = regexp.MustCompile(`"ordinal":\d+`).ReplaceAllFunc(turn, func([]byte) []byte {
		b := fmt.Appendf(nil, `"ordinal":%d`, next)
		next++
		return b
	})
	turn = regexp.MustCompile(`(msg|fc|fco)_01a`).ReplaceAll(turn, []byte("${1}_01b"))
	turn = regexp.MustCompile(`call_01a`).ReplaceAll(turn, []byte("call_01b"))
	if err := os.WriteFile(parent, append(data, append(turn, '\n')...), 0o644); err != nil {
		t.Fatal(err)
	}
	dropFirstID(t, parent, end)
	out, err := run(t, options(parent))
	if err != nil {
		t.Fatal(err)
	}
	if out.Refusal != nil || !out.Wrote {
		t.Fatalf("a repair past every cutoff: refusal %v, wrote %v", out.Refusal, out.Wrote)
	}
	if got := read(t, parent); !bytes.Equal(got[:end], data) {
		t.Error("the repair changed bytes the forks inherit")
	}
}

// repair --undo is a write too: once a fork continues the repaired file,
// putting the original back under it is refused.
func TestUndoRefusesReferencedBytes(t *testing.T) {
	dir := t.TempDir()
	files, err := lineagegen.Write(dir, lineagegen.Tree{lineagegen.Standard[0]})
	if err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(dir, files["parent"].Path)
	dropFirstID(t, parent, 0)
	if out, err := run(t, options(parent)); err != nil || !out.Wrote {
		t.Fatalf("repair: %v", err)
	}
	// Now a fork of the repaired parent, at its end.
	repaired := read(t, parent)
	childPath := filepath.Join(filepath.Dir(parent), "rollout-2026-09-09T05-00-00-01a08489-8480-7002-800a-000000000002.jsonl")
	child := fmt.Sprintf(`{"timestamp":"2026-09-09T05:00:00.000Z","ordinal":%d,"type":"session_meta","payload":{"id":"01a08489-8480-7002-800a-000000000002","history_mode":"paginated","history_base":{"thread_id":%q,"end_ordinal_exclusive":%d,"end_byte_offset":%d}}}`+"\n",
		files["parent"].Ordinals, files["parent"].Rollout, files["parent"].Ordinals, len(repaired))
	if err := os.WriteFile(childPath, []byte(child), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Undo(parent, UndoOptions{})
	var r *inplace.Refusal
	if !errors.As(err, &r) || r.Kind != inplace.Referenced || !strings.Contains(r.Error(), childPath) {
		t.Fatalf("undo under a fork: %v, want a Referenced refusal naming the fork", err)
	}
	if !bytes.Equal(read(t, parent), repaired) {
		t.Error("a refused undo changed the file")
	}
	// Without the fork the undo goes ahead.
	os.Remove(childPath)
	if _, err := Undo(parent, UndoOptions{}); err != nil {
		t.Fatalf("undo without the fork: %v", err)
	}
}
