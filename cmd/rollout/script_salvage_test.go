package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/gen"
)

// Script commands for rollouts stored as zstd and cut short.

// cmdGenRollout: genrollout SEED BYTES DST writes a clean generated rollout
// of about BYTES bytes (internal/testkit/fixturegen/gen; lines of at most 64 KiB) to DST.
func cmdGenRollout(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: genrollout seed bytes dst")
	}
	seed, err1 := strconv.ParseUint(args[0], 10, 64)
	size, err2 := strconv.ParseInt(args[1], 10, 64)
	if err1 != nil || err2 != nil {
		ts.Fatalf("genrollout: bad seed or size")
	}
	_, err := gen.WriteFile(ts.MkAbs(args[2]), gen.Options{Seed: seed, TargetBytes: size, MaxLineBytes: 64 << 10})
	ts.Check(err)
}

// cmdHeadC: headc N% SRC DST writes the first N percent of SRC's bytes to
// DST, as an interrupted copy (or head -c) leaves them.
func cmdHeadC(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 || !strings.HasSuffix(args[0], "%") {
		ts.Fatalf("usage: headc N%% src dst")
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(args[0], "%"))
	ts.Check(err)
	b := []byte(ts.ReadFile(args[1]))
	dst := ts.MkAbs(args[2])
	ts.Check(os.MkdirAll(filepath.Dir(dst), 0o777))
	ts.Check(os.WriteFile(dst, b[:len(b)*pct/100], 0o644))
}

// cmdUnzstd: unzstd [-partial] SRC DST decodes SRC into DST, and fails
// unless the stream is whole; with -partial, a stream cut short is
// expected, and DST gets what decodes before the cut.
func cmdUnzstd(ts *testscript.TestScript, neg bool, args []string) {
	partial := len(args) == 3 && args[0] == "-partial"
	if partial {
		args = args[1:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: unzstd [-partial] src dst")
	}
	out, err := zstdDecodeAll([]byte(ts.ReadFile(args[0])))
	switch {
	case partial && !errors.Is(err, io.ErrUnexpectedEOF):
		ts.Fatalf("unzstd: %s is not cut short (%v)", args[0], err)
	case !partial && err != nil:
		ts.Fatalf("unzstd: %s: %v", args[0], err)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), out, 0o644))
}

func zstdDecodeAll(b []byte) ([]byte, error) {
	dec, err := zstd.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	return io.ReadAll(dec)
}

// cmdWholeLines: wholelines SRC DST writes SRC's lines that end with a
// newline (all but a torn last line) to DST.
func cmdWholeLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: wholelines src dst")
	}
	b := []byte(ts.ReadFile(args[0]))
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b[:bytes.LastIndexByte(b, '\n')+1], 0o644))
}

// cmdZstdTail: zstdtail QUARANTINE ORIGINAL checks the entry a salvage
// leaves in QUARANTINE for ORIGINAL, a zstd file cut short: its base64
// decodes to ORIGINAL's bytes from compressed_offset to the end, and the
// bytes before it decode to byte_offset bytes (what was salvaged).
func cmdZstdTail(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: zstdtail quarantine original")
	}
	orig := []byte(ts.ReadFile(args[1]))
	var found int
	for l := range strings.Lines(ts.ReadFile(args[0])) {
		var e struct {
			ByteOffset int64   `json:"byte_offset"`
			Offset     *int64  `json:"compressed_offset"`
			Size       int64   `json:"compressed_size"`
			Base64     *string `json:"compressed_base64"`
		}
		ts.Check(json.Unmarshal([]byte(l), &e))
		if e.Base64 == nil {
			continue
		}
		found++
		tail, err := base64.StdEncoding.DecodeString(*e.Base64)
		ts.Check(err)
		switch off := *e.Offset; {
		case e.Size != int64(len(orig)) || off < 0 || off > e.Size:
			ts.Fatalf("zstdtail: entry at %d of %d bytes; %s has %d", off, e.Size, args[1], len(orig))
		case !bytes.Equal(tail, orig[off:]):
			ts.Fatalf("zstdtail: the %d bytes of the entry are not %s's bytes from %d on", len(tail), args[1], off)
		default:
			before, _ := zstdDecodeAll(orig[:off])
			if int64(len(before)) != e.ByteOffset {
				ts.Fatalf("zstdtail: the bytes before %d decode to %d bytes, the entry says %d were salvaged", off, len(before), e.ByteOffset)
			}
		}
	}
	if found != 1 {
		ts.Fatalf("zstdtail: %d entries with compressed_base64, want 1", found)
	}
}
