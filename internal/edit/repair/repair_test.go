package repair

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
	"github.com/rollout-dev/rollout/rollout"
)

// demo is a rollout with a torn tail and two wrong ids: every repair
// writes a changed file and a quarantine.
const demo = "../../../fixtures/demo/rollout-2026-03-10T09-35-30-019cd719-fabd-7808-8020-00009e3779b2.jsonl"

func options(path string) Options {
	return Options{Path: path, Write: true, MaxLineBytes: rollout.DefaultMaxLineBytes, HandoffCap: 16000}
}

func run(t *testing.T, opts Options) (*Outcome, error) {
	t.Helper()
	tx, err := Begin(opts)
	if err != nil {
		return nil, err
	}
	return tx.Finish(), nil
}

func read(t *testing.T, path string) []byte   { return filetest.Read(t, path) }
func names(t *testing.T, dir string) []string { return filetest.List(t, dir) }
func zstdOf(t *testing.T, b []byte) []byte    { return filetest.Zstd(t, b) }

// plainRepair is the oracle: the repair of the same bytes stored plain.
func plainRepair(t *testing.T, input []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "rollout.jsonl")
	os.WriteFile(in, input, 0o644)
	out, err := run(t, options(in))
	if err != nil || out.Refusal != nil || !out.Wrote {
		t.Fatalf("plain repair: %v %v", err, out)
	}
	return read(t, in)
}

// TestZstdRepairedInPlace: zstd content, named .jsonl.zst or .jsonl, is
// repaired in place and written back zstd-compressed; decompressed, it is
// the repair of the plain file, and it verifies clean.
func TestZstdRepairedInPlace(t *testing.T) {
	input := read(t, demo)
	want := plainRepair(t, input)
	for _, name := range []string{"rollout.jsonl.zst", "rollout.jsonl"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			compressed := zstdOf(t, input)
			os.WriteFile(path, compressed, 0o640)
			out, err := run(t, options(path))
			if err != nil || out.Refusal != nil || !out.Wrote {
				t.Fatalf("repair: %v, refusal %v, wrote %v", err, out.Refusal, out != nil && out.Wrote)
			}
			if out.Compression != rollout.Zstd {
				t.Errorf("compression %v, want zstd", out.Compression)
			}
			raw := read(t, path)
			dec, err := zstd.NewReader(nil)
			if err != nil {
				t.Fatal(err)
			}
			defer dec.Close()
			got, err := dec.DecodeAll(raw, nil)
			if err != nil {
				t.Fatalf("the result does not decompress: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("decompressed result differs from the repair of the plain file")
			}
			res, err := checks.Run(path, nil, checks.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				if f.Severity == checks.Error {
					t.Errorf("after repair: %s:%d %s", f.Path, f.Line, f.Rule)
				}
			}
			if !bytes.Equal(read(t, out.Backup), compressed) {
				t.Errorf("the backup is not the original")
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want 0640", fi.Mode().Perm())
			}
			if len(out.Quarantined) != 1 || !strings.HasPrefix(string(read(t, out.Quarantine)), `{"line":28,`) {
				t.Errorf("the torn tail is not in the quarantine")
			}
		})
	}
}

// TestUnwritableFormatsRefused: gzip, bzip2 and xz content (whatever the
// name) and archives are refused before anything is written: the file
// stays byte for byte and nothing is created next to it.
func TestUnwritableFormatsRefused(t *testing.T) {
	input := read(t, demo)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(input)
	zw.Close()
	for _, tc := range []struct {
		name string
		data []byte
		kind inplace.Kind
	}{
		{"gzip.jsonl", gz.Bytes(), inplace.Compressed},
		{"bzip2.jsonl", append([]byte("BZh91AY&SY"), input...), inplace.Compressed},
		{"xz.jsonl", append([]byte("\xfd7zXZ\x00\x00"), input...), inplace.Compressed},
		{"zip.jsonl", append([]byte("PK\x03\x04"), input...), inplace.NotRollout},
	} {
		for _, dryRun := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, tc.name)
				os.WriteFile(path, tc.data, 0o644)
				opts := options(path)
				opts.Write = !dryRun
				_, err := run(t, opts)
				var ref *inplace.Refusal
				if !errors.As(err, &ref) || ref.Kind != tc.kind {
					t.Fatalf("err %v, want a refusal of kind %d", err, tc.kind)
				}
				if !strings.Contains(err.Error(), "decompress it first") || !strings.Contains(err.Error(), path) {
					t.Errorf("message %q does not say what to do with which file", err)
				}
				if !bytes.Equal(read(t, path), tc.data) {
					t.Errorf("the file changed")
				}
				if got := names(t, dir); !slices.Equal(got, []string{tc.name}) {
					t.Errorf("files left behind: %v", got)
				}
			})
		}
	}
}

// TestNothingParsesRefused: a file in which no line is a record would be
// emptied (every line to the quarantine): refused, file untouched. (Text
// is refused by the opener's sniffing already; Force gets past it.)
func TestNothingParsesRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "notes.jsonl")
	data := []byte("these are not\nthe lines of a rollout\n")
	os.WriteFile(path, data, 0o644)
	if _, err := run(t, options(path)); !errors.Is(err, rollout.ErrFirstLineNotObject) {
		t.Fatalf("without Force: %v, want not a rollout", err)
	}
	opts := options(path)
	opts.Force = true
	out, err := run(t, opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.Refusal == nil || out.Refusal.Kind != inplace.NotRollout || out.Wrote {
		t.Fatalf("refusal %v, wrote %v: want a NotRollout refusal", out.Refusal, out.Wrote)
	}
	if !bytes.Equal(read(t, path), data) {
		t.Errorf("the file changed")
	}
	if got := names(t, dir); !slices.Equal(got, []string{"notes.jsonl"}) {
		t.Errorf("files left behind: %v", got)
	}
}

// TestOutputCompressionFollowsName: with Output, zstd content named .jsonl
// written to a plain name comes out decompressed, and a plain input
// written to a .zst name comes out compressed, with or without fixes.
func TestOutputCompressionFollowsName(t *testing.T) {
	input := read(t, demo)
	want := plainRepair(t, input)
	for _, tc := range []struct {
		in, out string
		zin     bool
	}{
		{"in.jsonl", "out.jsonl", true},
		{"in.jsonl", "out.jsonl.zst", false},
		{"in.jsonl", "out.jsonl.zst", true},
	} {
		t.Run(tc.in+"->"+tc.out, func(t *testing.T) {
			dir := t.TempDir()
			in, outPath := filepath.Join(dir, tc.in), filepath.Join(dir, tc.out)
			data := input
			if tc.zin {
				data = zstdOf(t, input)
			}
			os.WriteFile(in, data, 0o644)
			opts := options(in)
			opts.Output = outPath
			out, err := run(t, opts)
			if err != nil || out.Refusal != nil {
				t.Fatalf("%v %v", err, out)
			}
			f, err := rollout.Open(outPath, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			got.ReadFrom(f)
			f.Close()
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("the result is not the repair of the plain file")
			}
			isZstd := bytes.HasPrefix(read(t, outPath), []byte{0x28, 0xb5, 0x2f, 0xfd})
			if isZstd != strings.HasSuffix(tc.out, ".zst") {
				t.Errorf("zstd output %v for %s", isZstd, tc.out)
			}
			if !bytes.Equal(read(t, in), data) {
				t.Errorf("the input changed")
			}
		})
	}
}

// TestPlannedFindingsAreNotKept: a plan of many fixes does not keep the
// findings it fixes through the rewrite (a million blank lines kept a
// million findings, planned edits and changes at once: 750 MiB). The
// outcome keeps the unplanned ones, names the planned by rule and line,
// and the guard still counts every error of the input.
func TestPlannedFindingsAreNotKept(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rollout.jsonl")
	meta := `{"timestamp":"2026-03-10T09:35:30.037Z","type":"session_meta","payload":{"id":"019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90"}}` + "\n"
	os.WriteFile(path, []byte(meta+strings.Repeat("\n", 500)+"garbage\n"), 0o644)
	opts := options(path)
	opts.Write = false
	opts.Fix, _ = checks.SelectFixes([]string{"line/blank"})
	out, err := run(t, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Fixes.Planned) != 500 || out.Fixes.Planned[0] != (checks.PlannedFix{Rule: "line/blank", Line: 2}) {
		t.Errorf("planned %d, first %+v", len(out.Fixes.Planned), out.Fixes.Planned[0])
	}
	for _, f := range out.Input.Findings {
		if f.Rule == "line/blank" {
			t.Fatalf("a planned finding is kept: %+v", f)
		}
	}
	if len(out.Input.Findings) != 1 || out.Input.Findings[0].Rule != "line/invalid-json" {
		t.Errorf("the unplanned findings: %+v", out.Input.Findings)
	}
	if out.Refusal != nil || out.Changes.Len() != 500 {
		t.Errorf("refusal %v, %d changes", out.Refusal, out.Changes.Len())
	}
}
