package rollout

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"
)

var samples = []string{
	"testdata/synthetic-bare-era-2025.jsonl",
	"testdata/synthetic-envelope-legacy-mode.jsonl",
	"testdata/synthetic-envelope-paginated-mode.jsonl",
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func compress(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := zstd.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, p := range []string{
		"a/rollout-1.jsonl",
		"a/rollout-1.jsonl.zst", // twin of a plain file: dropped
		"b/deep/rollout-2.jsonl.zst",
		"rollout-4.jsonl",
		"notes.txt",
		"rollout-3.json",
		"other.jsonl",
		"rollout-5.jsonl.gz",
		"a/x-rollout-6.jsonl",
		"rollout-4.jsonl.quarantine.jsonl", // lines repair removed, not a thread
		"rollout-4.jsonl.bak",
	} {
		writeFile(t, filepath.Join(root, p), []byte("{}\n"))
	}
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	j := func(p string) string { return filepath.Join(root, p) }

	t.Run("walk", func(t *testing.T) {
		got, err := Discover([]string{root})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{j("a/rollout-1.jsonl"), j("b/deep/rollout-2.jsonl.zst"), j("rollout-4.jsonl")}
		if diff := cmp.Diff(want, got.Paths); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		// Named *.jsonl files that are not rollouts are said to be skipped.
		if diff := cmp.Diff([]string{j("a/x-rollout-6.jsonl"), j("other.jsonl")}, got.Ignored); diff != "" {
			t.Errorf("ignored (-want +got):\n%s", diff)
		}
	})
	t.Run("files kept as given, stdin, no duplicates", func(t *testing.T) {
		// A file named on the command line is read whatever its name.
		got, err := Discover([]string{j("notes.txt"), "-", j("notes.txt"), j("a"), j("a/rollout-1.jsonl")})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{j("notes.txt"), "-", j("a/rollout-1.jsonl")}
		if diff := cmp.Diff(want, got.Paths); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("missing path", func(t *testing.T) {
		missing := j("no/such/rollout.jsonl")
		_, err := Discover([]string{j("rollout-4.jsonl"), missing})
		var pe *PathError
		if !errors.As(err, &pe) || pe.Path != missing {
			t.Fatalf("error %v, want a *PathError for %s", err, missing)
		}
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
			t.Errorf("error %q should name the path and be fs.ErrNotExist", err)
		}
	})
	t.Run("directory without rollouts", func(t *testing.T) {
		_, err := Discover([]string{j("empty")})
		var pe *PathError
		if !errors.As(err, &pe) || pe.Path != j("empty") || !errors.Is(err, ErrNoRollouts) {
			t.Fatalf("error %v, want ErrNoRollouts naming the directory", err)
		}
	})
}

func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, s := range samples {
		t.Run(filepath.Base(s), func(t *testing.T) {
			plain, err := os.ReadFile(s)
			if err != nil {
				t.Fatal(err)
			}
			zpath := filepath.Join(dir, filepath.Base(s)+".zst")
			writeFile(t, zpath, compress(t, plain))

			want := readAll(t, bytes.NewReader(plain), 0)
			if len(want) < 8 {
				t.Fatalf("sample has only %d records", len(want))
			}
			// zstd data is recognised by its magic bytes whatever the name.
			unnamed := filepath.Join(dir, filepath.Base(s)+".compressed.jsonl")
			writeFile(t, unnamed, compress(t, plain))
			for _, p := range []string{s, zpath, unnamed} {
				f, err := Open(p, nil)
				if err != nil {
					t.Fatal(err)
				}
				got := readAll(t, f, 0)
				if err := f.Close(); err != nil {
					t.Errorf("Close %s: %v", p, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: records differ from the plain file (-want +got):\n%s", p, diff)
				}
			}
			f, err := Open(StdinPath, bytes.NewReader(plain))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, readAll(t, f, 0)); diff != "" {
				t.Errorf("stdin: records differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "rollout-missing.jsonl")
	_, err := Open(missing, nil)
	var pe *PathError
	if !errors.As(err, &pe) || pe.Path != missing || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	_, err = Open(dir, nil)
	if !errors.As(err, &pe) || pe.Path != dir || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}
	// A .zst that is not zstd fails when read, with an error, not a panic.
	bad := filepath.Join(dir, "rollout-bad.jsonl.zst")
	writeFile(t, bad, []byte("{\"not\":\"zstd\"}\n"))
	f, err := Open(bad, nil)
	if err == nil {
		_, err = io.ReadAll(f)
		f.Close()
	}
	if err == nil {
		t.Errorf("reading a corrupt .zst gave no error")
	}
	// A truncated zstd stream also fails.
	plain, _ := os.ReadFile(samples[1])
	z := compress(t, plain)
	trunc := filepath.Join(dir, "rollout-trunc.jsonl.zst")
	writeFile(t, trunc, z[:len(z)/2])
	f, err = Open(trunc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := NewReader(f, 0)
	for err == nil {
		_, err = rd.Next()
	}
	if errors.Is(err, io.EOF) {
		t.Errorf("a truncated .zst read to a clean EOF")
	}
}

func TestOpenArchives(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, data := range map[string]string{
		"gzip":  "\x1f\x8b\x08\x00\x00\x00\x00\x00",
		"bzip2": "BZh91AY&SY",
		"xz":    "\xfd7zXZ\x00\x00",
		"zip":   "PK\x03\x04\x14\x00",
	} {
		p := filepath.Join(dir, "rollout-"+name+".jsonl")
		writeFile(t, p, []byte(data))
		_, err := Open(p, nil)
		var pe *PathError
		if !errors.Is(err, ErrUnknownFormat) || !errors.As(err, &pe) || pe.Path != p || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: Open = %v, want an ErrUnknownFormat naming the path and %s", name, err, name)
		}
	}
	// Text that merely starts like an archive is text, not bzip2.
	p := filepath.Join(dir, "rollout-text.jsonl")
	writeFile(t, p, []byte("BZ is not bzip2\n"))
	if _, err := Open(p, nil); err == nil || strings.Contains(err.Error(), "bzip2") || !strings.Contains(err.Error(), "(text)") {
		t.Errorf("plain text: Open = %v, want not a rollout (text)", err)
	}
}

func TestThreadIDFromName(t *testing.T) {
	t.Parallel()
	const id = "019cae52-3c1a-7b40-9d2e-5f1a2b3c4d5e"
	tests := []struct {
		path string
		want string
		ok   bool
	}{
		{"rollout-2026-03-02T10-15-30-" + id + ".jsonl", id, true},
		{"sessions/2026/03/02/rollout-2026-03-02T10-15-30-" + id + ".jsonl.zst", id, true},
		{"rollout-2026-03-02T10-15-30-" + strings.ToUpper(id) + ".jsonl", id, true},
		{"rollout-x-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl", "5973b6c0-94b8-487b-a530-2aeb6098ae0e", true}, // any version
		{"rollout-2026-03-02T10-15-30.jsonl", "", false},
		{"rollout-2026-03-02T10-15-30-019cae52-3c1a-7b40-9d2e-5f1a2b3c4dZZ.jsonl", "", false},
		{id[1:] + ".jsonl", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := ThreadIDFromName(tt.path)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ThreadIDFromName(%q) = %q, %v; want %q, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
}
