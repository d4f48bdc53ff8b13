package repair

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/reconstruct"
)

// cutZstd is a rollout with fixable findings near its start (the demo's
// wrong ids), stored as zstd in many blocks and cut at frac of its size:
// the file, and what a decoder reads of it before the cut.
func cutZstd(t *testing.T, frac float64) (cut, decoded []byte) {
	t.Helper()
	plain := bytes.Clone(read(t, demo))
	plain = plain[:bytes.LastIndexByte(plain, '\n')+1] // the demo's own torn tail off
	for i := range 6000 {
		plain = fmt.Appendf(plain, `{"timestamp":"2026-03-10T09:41:02.%03dZ","type":"event_msg","payload":{"type":"agent_message","message":"step %d: %s"}}`+"\n",
			i%1000, i*7919%100003, strings.Repeat("checked ", i%13))
	}
	var z bytes.Buffer
	w, err := zstd.NewWriter(&z)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(plain)
	w.Close()
	cut = z.Bytes()[:int(float64(z.Len())*frac)]
	decoded, err = zstdRead(cut)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(decoded) == 0 {
		t.Fatalf("the cut stream decodes to %d bytes, %v", len(decoded), err)
	}
	return cut, decoded
}

// zstdRead decodes b with a decoder of its own: what it hands out, and why
// it stops.
func zstdRead(b []byte) ([]byte, error) {
	dec, err := zstd.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	return io.ReadAll(dec)
}

type quarantineLine struct {
	Line             int    `json:"line"`
	ByteOffset       int64  `json:"byte_offset"`
	Reason           string `json:"reason"`
	Raw              string `json:"raw"`
	File             string `json:"file"`
	CompressedOffset int64  `json:"compressed_offset"`
	CompressedSize   int64  `json:"compressed_size"`
	CompressedBase64 string `json:"compressed_base64"`
}

func quarantineLines(t *testing.T, path string) []quarantineLine {
	t.Helper()
	var out []quarantineLine
	for l := range bytes.Lines(read(t, path)) {
		var q quarantineLine
		if err := json.Unmarshal(l, &q); err != nil {
			t.Fatalf("quarantine line %q: %v", l, err)
		}
		out = append(out, q)
	}
	return out
}

// TestSalvageTruncatedZstd: a .zst cut short is repaired from what it
// holds: the whole lines decoded, fixed as the same lines stored plain
// are, written back as zstd; the torn last line and the compressed bytes
// from the cut on go to the quarantine, the latter byte for byte (as
// base64), with --no-backup too. It used to be refused (a read error).
func TestSalvageTruncatedZstd(t *testing.T) {
	cut, decoded := cutZstd(t, 0.6)
	whole := decoded[:bytes.LastIndexByte(decoded, '\n')+1]
	torn := decoded[len(whole):]
	if len(torn) == 0 {
		t.Fatal("the cut leaves no torn line: move it")
	}
	want := plainRepair(t, whole)

	dir := t.TempDir()
	path := filepath.Join(dir, "rollout-cut.jsonl.zst")
	os.WriteFile(path, cut, 0o644)
	opts := options(path)
	opts.NoBackup = true
	out, err := run(t, opts)
	if err != nil {
		t.Fatalf("repair: %v", err)
	}
	if out.Refusal != nil || !out.Wrote {
		t.Fatalf("not written: %v", out.Refusal)
	}
	s := out.Salvage
	if s == nil || s.Decoded != int64(len(decoded)) || s.Size != int64(len(cut)) {
		t.Fatalf("salvage %+v: want %d bytes decoded of %d", s, len(decoded), len(cut))
	}
	got, err := zstdRead(read(t, path))
	if err != nil {
		t.Fatalf("the result does not decode: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the result (%d bytes) is not the repair of the whole lines stored plain (%d bytes)", len(got), len(want))
	}
	if len(out.Remaining()) != 0 {
		t.Errorf("remaining: %v", out.Remaining())
	}

	qs := quarantineLines(t, path+".quarantine.jsonl")
	if len(qs) != 2 {
		t.Fatalf("quarantine holds %d entries, want the torn line and the tail: %+v", len(qs), qs)
	}
	line := bytes.Count(whole, []byte("\n")) + 1
	if q := qs[0]; q.Reason != "line/torn-tail" || q.Raw != string(torn) || q.Line != line || q.ByteOffset != int64(len(whole)) {
		t.Errorf("first entry %+v: want the torn line %d at %d", q, line, len(whole))
	}
	q := qs[1]
	tail, err := base64.StdEncoding.DecodeString(q.CompressedBase64)
	switch {
	case err != nil:
		t.Fatal(err)
	case q.Reason != "line/torn-tail" || q.File != "rollout-cut.jsonl.zst" || q.Line != line || q.ByteOffset != int64(len(decoded)):
		t.Errorf("tail entry %+v", q)
	case q.CompressedSize != int64(len(cut)) || q.CompressedOffset != s.Offset:
		t.Errorf("tail entry at %d of %d, salvage %+v", q.CompressedOffset, q.CompressedSize, s)
	case !bytes.Equal(tail, cut[q.CompressedOffset:]):
		t.Errorf("the tail (%d bytes) is not the file's bytes from %d on", len(tail), q.CompressedOffset)
	case len(tail) == 0 || len(tail) > 128<<10+3:
		t.Errorf("the tail is %d bytes: not the block the cut falls in", len(tail))
	}
	// The bytes before the tail decode to exactly what was salvaged: the
	// result and its quarantine account for the whole input.
	if before, _ := zstdRead(cut[:q.CompressedOffset]); !bytes.Equal(before, decoded) {
		t.Errorf("the %d bytes before the tail decode to %d bytes, %d were salvaged", q.CompressedOffset, len(before), len(decoded))
	}

	// Repairing the result changes nothing.
	repaired := read(t, path)
	qBefore := read(t, path+".quarantine.jsonl")
	again, err := run(t, opts)
	if err != nil || !again.NothingToFix() || again.Salvage != nil {
		t.Fatalf("second repair: %v, %+v", err, again)
	}
	if !bytes.Equal(read(t, path), repaired) || !bytes.Equal(read(t, path+".quarantine.jsonl"), qBefore) {
		t.Error("the second repair changed a file")
	}
	if n := names(t, dir); !slices.Equal(n, []string{"rollout-cut.jsonl.zst", "rollout-cut.jsonl.zst.quarantine.jsonl"}) {
		t.Errorf("files left: %v", n)
	}
}

// TestSalvageDryRunAndUndo: a dry run plans the salvage and writes
// nothing; a write with a backup is undone to the cut file as it was.
func TestSalvageDryRunAndUndo(t *testing.T) {
	cut, decoded := cutZstd(t, 0.4)
	dir := t.TempDir()
	path := filepath.Join(dir, "rollout-cut.jsonl.zst")
	os.WriteFile(path, cut, 0o644)

	opts := options(path)
	opts.Write = false
	out, err := run(t, opts)
	if err != nil || out.Salvage == nil || out.Wrote || out.NothingToFix() {
		t.Fatalf("dry run: %v, %+v", err, out)
	}
	if out.Salvage.Decoded != int64(len(decoded)) || out.Salvage.TailBytes() <= 0 {
		t.Errorf("planned salvage %+v", out.Salvage)
	}
	if n := names(t, dir); len(n) != 1 || !bytes.Equal(read(t, path), cut) {
		t.Fatalf("the dry run wrote: %v", n)
	}

	out, err = run(t, options(path))
	if err != nil || !out.Wrote || out.Backup == "" {
		t.Fatalf("write: %v, %+v", err, out)
	}
	if !bytes.Equal(read(t, out.Backup), cut) {
		t.Error("the backup is not the cut file")
	}
	if _, err := Undo(path, UndoOptions{}); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if n := names(t, dir); len(n) != 1 || !bytes.Equal(read(t, path), cut) {
		t.Errorf("after undo: %v", n)
	}
}

// TestSalvageNeedsTornTailFix: without line/torn-tail's fix, a .zst cut
// short is still a read error, and nothing is written. So is one cut
// before its first whole line: there is nothing to salvage.
func TestSalvageNeedsTornTailFix(t *testing.T) {
	cut, decoded := cutZstd(t, 0.5)
	torn := len(decoded) - bytes.LastIndexByte(decoded, '\n') - 1
	if torn < 2 {
		t.Fatal("the cut leaves no torn line: move it")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "rollout-cut.jsonl.zst")
	os.WriteFile(path, cut, 0o644)
	opts := options(path)
	opts.Fix = checks.FixSet{"item/missing-id": true}
	_, err := run(t, opts)
	var re *reconstruct.ReadError
	if !errors.As(err, &re) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want a read error", err)
	}

	// A torn line longer than --max-line-bytes is not read: it cannot be
	// told torn, and would stay in the result.
	opts = options(path)
	opts.MaxLineBytes = int64(torn - 1)
	if _, err := run(t, opts); !errors.As(err, &re) {
		t.Errorf("with a torn line too long to read: err = %v, want a read error", err)
	}

	os.WriteFile(path, cut[:30], 0o644)
	out, err := run(t, options(path))
	if err != nil || out.Refusal == nil || out.Refusal.Kind != inplace.NotRollout {
		t.Errorf("a stream cut in its first block: %v, %+v", err, out)
	}
	if n := names(t, dir); len(n) != 1 || !bytes.Equal(read(t, path), cut[:30]) {
		t.Errorf("files: %v", n)
	}
}

// TestSalvageCutAtLineEnd: a stream of two frames cut in the second one's
// first block decodes to whole lines: nothing is torn, the salvage alone
// rewrites the file (the first frame's content, fixed), and the tail is
// the second frame from its header on.
func TestSalvageCutAtLineEnd(t *testing.T) {
	first := bytes.Clone(read(t, demo))
	first = first[:bytes.LastIndexByte(first, '\n')+1]
	var more []byte
	for i := range 3000 {
		more = fmt.Appendf(more, `{"timestamp":"2026-03-10T09:41:02.000Z","type":"event_msg","payload":{"type":"agent_message","message":"%d"}}`+"\n", i*i)
	}
	f1, f2 := zstdOf(t, first), zstdOf(t, more)
	cut := append(bytes.Clone(f1), f2[:20]...)
	dir := t.TempDir()
	path := filepath.Join(dir, "rollout-cut.jsonl.zst")
	os.WriteFile(path, cut, 0o644)
	opts := options(path)
	opts.NoBackup = true
	out, err := run(t, opts)
	if err != nil || !out.Wrote {
		t.Fatalf("repair: %v, %+v", err, out)
	}
	if s := out.Salvage; s == nil || s.Offset != int64(len(f1)) || s.Decoded != int64(len(first)) || len(out.Quarantined) != 0 {
		t.Fatalf("salvage %+v, quarantined %v: want the tail from %d, %d bytes decoded", s, out.Quarantined, len(f1), len(first))
	}
	if got, err := zstdRead(read(t, path)); err != nil || !bytes.Equal(got, plainRepair(t, first)) {
		t.Errorf("the result (%v) is not the first frame's lines repaired", err)
	}
	qs := quarantineLines(t, path+".quarantine.jsonl")
	if len(qs) != 1 {
		t.Fatalf("quarantine: %+v", qs)
	}
	if tail, _ := base64.StdEncoding.DecodeString(qs[0].CompressedBase64); !bytes.Equal(tail, f2[:20]) || qs[0].Line != bytes.Count(first, []byte("\n"))+1 {
		t.Errorf("tail entry %+v: want the second frame's first 20 bytes", qs[0])
	}
}
