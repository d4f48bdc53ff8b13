package rollout_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/rollout"
)

// cutTestStream is several zstd frames of every kind a reader meets: with
// and without a checksum, compressed, raw and RLE blocks, a single-segment
// frame with its content size, and a skippable frame. Small blocks (a 1
// KiB window) make many of them.
func cutTestStream(t *testing.T) []byte {
	t.Helper()
	var text bytes.Buffer
	for i := range 300 {
		fmt.Fprintf(&text, `{"timestamp":"2026-03-02T10:15:41.000Z","type":"event_msg","payload":{"message":"%d"}}`+"\n", i*i)
	}
	random := make([]byte, 3000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	frame := func(content []byte, opts ...zstd.EOption) []byte {
		var b bytes.Buffer
		w, err := zstd.NewWriter(&b, append(opts, zstd.WithWindowSize(1<<10), zstd.WithEncoderConcurrency(1))...)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(content)
		w.Close()
		return b.Bytes()
	}
	var s []byte
	s = append(s, frame(text.Bytes())...)
	s = binary.LittleEndian.AppendUint32(s, 0x184D2A53) // a skippable frame
	s = binary.LittleEndian.AppendUint32(s, 5)
	s = append(s, "skip!"...)
	mixed := append(append(bytes.Clone(random), bytes.Repeat([]byte("a"), 3000)...), text.Bytes()[:2000]...)
	s = append(s, frame(mixed, zstd.WithEncoderCRC(false))...)
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	s = enc.EncodeAll(text.Bytes()[:500], s) // single segment, content size known
	return s
}

// decodeAll decodes as repair does (rollout.DecodeWith): what the decoder
// hands out before it stops, and why it stops.
func decodeAll(t *testing.T, b []byte) ([]byte, error) {
	t.Helper()
	dec, _, err := rollout.DecodeWith("x.jsonl.zst", bytes.NewReader(b), rollout.OpenOptions{Force: true})
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	return io.ReadAll(dec)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// unitEnds decodes s with a decoder reading exactly what it needs (no
// read-ahead), and returns, each time it hands out the content of a block,
// how many bytes of s it had read then: where each block that has content
// ends (its frame's checksum included, for a last block).
func unitEnds(t *testing.T, s []byte) (ends []int) {
	t.Helper()
	in := &countingReader{r: bytes.NewReader(s)}
	dec, err := zstd.NewReader(in, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	buf := make([]byte, 1<<20)
	for {
		n, err := dec.Read(buf)
		if n > 0 {
			ends = append(ends, in.n)
		}
		if err == io.EOF {
			return ends
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestZstdCutMatchesDecoder cuts a stream at every byte and checks the
// cut against the decoder: a stream the decoder finds cut short is
// reported cut, the tail is the stream's bytes from the offset on, the
// bytes before the offset decode to exactly what the decoder handed out
// (nothing of the tail was decoded), and the offset is no later than the
// end of the last block decoded plus the frame headers that may follow it
// (every byte of a block not decoded is in the tail).
func TestZstdCutMatchesDecoder(t *testing.T) {
	s := cutTestStream(t)
	ends := unitEnds(t, s)
	const headers = 8 + 5 + 18 // the skippable frame, then a frame header at most
	r := rand.New(rand.NewPCG(3, 4))
	var whole, cuts int
	for c := 0; c <= len(s); c++ {
		got, derr := decodeAll(t, s[:c])
		var z rollout.ZstdCut
		for rest := s[:c]; len(rest) > 0; { // in chunks of any size
			k := min(len(rest), 1+r.IntN(700))
			z.Write(rest[:k])
			rest = rest[k:]
		}
		cut, off, tail, err := z.End()
		switch {
		case err != nil:
			t.Fatalf("cut at %d: %v", c, err)
		case derr == nil:
			whole++
			if cut {
				t.Fatalf("cut at %d: the decoder read it whole, ZstdCut says cut at %d", c, off)
			}
		case !errors.Is(derr, io.ErrUnexpectedEOF):
			t.Fatalf("cut at %d: the decoder says %v", c, derr)
		case !cut:
			t.Fatalf("cut at %d: the decoder found it cut short, ZstdCut did not", c)
		default:
			cuts++
			if !bytes.Equal(tail, s[off:c]) {
				t.Fatalf("cut at %d: the tail is not the stream's bytes from %d on", c, off)
			}
			before, _ := decodeAll(t, s[:off])
			if !bytes.Equal(before, got) {
				t.Fatalf("cut at %d: the %d bytes before offset %d decode to %d bytes, the cut stream to %d", c, off, off, len(before), len(got))
			}
			decoded := 0 // the end of the last block decoded
			for _, e := range ends {
				if e <= c {
					decoded = e
				}
			}
			if off < int64(decoded) || off > int64(decoded+headers) {
				t.Fatalf("cut at %d: the tail starts at %d, the last block decoded ends at %d", c, off, decoded)
			}
		}
	}
	if whole < 4 || cuts < len(s)-10 {
		t.Errorf("%d whole, %d cut of %d: the stream is not what the test needs", whole, cuts, len(s)+1)
	}
}

// TestZstdCutMalformed: a header no zstd stream has is not a cut.
func TestZstdCutMalformed(t *testing.T) {
	var z rollout.ZstdCut
	z.Write([]byte("{\"not\":\"zstd\"}\n"))
	if _, _, _, err := z.End(); err == nil {
		t.Error("a JSON line is taken for a zstd stream")
	}
	// A block of the reserved type 3 right after a frame header.
	hdr := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50}
	z = rollout.ZstdCut{}
	z.Write(append(hdr, 0x07, 0, 0))
	if _, _, _, err := z.End(); err == nil {
		t.Error("a reserved block type is taken for a cut")
	}
}
