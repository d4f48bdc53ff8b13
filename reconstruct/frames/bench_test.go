package frames_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/framegen"
	"github.com/rollout-dev/rollout/reconstruct/frames"
)

// BenchmarkPlan40MiB: the stream, 200 increments of 1 KiB in the
// agent's wrapped style (about 42 MiB).
func BenchmarkPlan40MiB(b *testing.B) {
	var buf bytes.Buffer
	if _, err := framegen.Write(&buf, framegen.Options{}); err != nil {
		b.Fatal(err)
	}
	log := buf.Bytes()
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := frames.Plan(bytes.NewReader(log), 0, frames.Options{})
		if err != nil || p.Frames != 200 {
			b.Fatalf("plan: %v, %d frames", err, p.Frames)
		}
	}
}

func BenchmarkApply40MiB(b *testing.B) {
	var buf bytes.Buffer
	if _, err := framegen.Write(&buf, framegen.Options{}); err != nil {
		b.Fatal(err)
	}
	log := buf.Bytes()
	p, err := frames.Plan(bytes.NewReader(log), 0, frames.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		if _, err := frames.Apply(bytes.NewReader(log), io.Discard, p); err != nil {
			b.Fatal(err)
		}
	}
}
