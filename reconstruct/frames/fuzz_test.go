package frames_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rollout-dev/rollout/reconstruct/frames"
)

// FuzzReclaim: on any input, planning never fails or panics, the proof of
// the plan holds, only whole lines go, and reclaiming the result again
// drops nothing. Seeded from fixtures/frames.
func FuzzReclaim(f *testing.F) {
	paths, _ := filepath.Glob("../../fixtures/frames/*.jsonl")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte(lines(start(), delta("text", 0, "a"), end(0, "text", "a"), done(`{"type":"text","text":"a"}`), start(), delta("text", 0, "b"))))
	f.Add([]byte(lines(wrap(delta("toolcall", 1, `{"a": 1.0}`)), toolEnd(1, `{"a":1}`), msgEnd("stop", ""))))
	f.Fuzz(func(t *testing.T, log []byte) {
		const maxLine = 1 << 12 // small, to reach the oversized path
		p, err := frames.Plan(bytes.NewReader(log), maxLine, frames.Options{MaxBytes: 1 << 11, MaxFrames: 64})
		if err != nil {
			t.Fatalf("plan: %v", err)
		}
		if err := frames.Check(bytes.NewReader(log), maxLine, p); err != nil {
			t.Fatalf("check: %v", err)
		}
		var out bytes.Buffer
		if _, err := frames.Apply(bytes.NewReader(log), &out, p); err != nil {
			t.Fatal(err)
		}
		if int64(out.Len()) != p.BytesAfter || p.BytesBefore != int64(len(log)) {
			t.Fatalf("plan says %d -> %d bytes, Apply wrote %d of %d", p.BytesBefore, p.BytesAfter, out.Len(), len(log))
		}
		p2, err := frames.Plan(bytes.NewReader(out.Bytes()), maxLine, frames.Options{MaxBytes: 1 << 11, MaxFrames: 64})
		if err != nil || p2.Frames != 0 {
			t.Fatalf("second reclamation: %v, %d frames", err, p2.Frames)
		}
	})
}
