package rollout

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// Sniffing: a file whose first non-blank byte does not open a JSON object
// is not a rollout, and says what it looks like; Force reads it anyway.
func TestOpenSniff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name, data, kind string // kind "" means: read as a rollout
	}{
		{"elf", "\x7fELF\x02\x01\x01\x00\x00\x00", "ELF executable"},
		{"pdf", "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "PDF document"},
		{"png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "PNG image"},
		{"jpeg", "\xff\xd8\xff\xe0\x00\x10JFIF", "JPEG image"},
		{"tar", strings.Repeat("\x00", 257) + "ustar\x0000" + strings.Repeat("\x00", 100), "tar archive"},
		{"text", "Dear support,\nmy session broke.\n", "text"},
		{"array", `[{"type":"session_meta"}]`, "JSON array"},
		{"binary", "\x01\x02\x00\x03", "binary data"},
		{"torn first line", `ession_meta","payload":{}}` + "\n" + `{"type":"x"}` + "\n", "text"},
		{"object", `{"type":"session_meta"}` + "\n", ""},
		{"blank lines first", "\n\r\n  " + `{"type":"session_meta"}` + "\n", ""},
		{"byte-order mark", "\xef\xbb\xbf" + `{"type":"session_meta"}` + "\n", ""},
		{"empty", "", ""},
		{"invalid JSON object", `{"type":` + "\n", ""},
	}
	for i, tt := range tests {
		p := filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i))
		writeFile(t, p, []byte(tt.data))
		f, err := Open(p, nil)
		if tt.kind == "" {
			if err != nil {
				t.Errorf("%s: Open = %v, want it read", tt.name, err)
			} else {
				f.Close()
			}
			continue
		}
		var pe *PathError
		if !errors.Is(err, ErrUnknownFormat) || !errors.Is(err, ErrFirstLineNotObject) || !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.kind) {
			t.Errorf("%s: Open = %v, want not a rollout (%s)", tt.name, err, tt.kind)
		}
		f, err = OpenWith(p, nil, OpenOptions{Force: true})
		if err != nil {
			t.Errorf("%s: OpenWith(Force) = %v", tt.name, err)
			continue
		}
		got, _ := io.ReadAll(f)
		f.Close()
		if string(got) != tt.data {
			t.Errorf("%s: forced read %q, want the file", tt.name, got)
		}
	}
}

// Sniffing looks at the decompressed bytes of a .zst, and OnRead counts the
// bytes as stored.
func TestOpenSniffZstd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "r.jsonl.zst")
	writeFile(t, p, compress(t, []byte("%PDF-1.7\n")))
	if _, err := Open(p, nil); !errors.Is(err, ErrFirstLineNotObject) {
		t.Errorf("zstd PDF: Open = %v, want not a rollout", err)
	}
	good := compress(t, []byte(`{"type":"session_meta"}`+"\n"))
	writeFile(t, p, good)
	read := 0
	f, err := OpenWith(p, nil, OpenOptions{OnRead: func(n int) { read += n }})
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(f)
	f.Close()
	if read != len(good) {
		t.Errorf("OnRead counted %d bytes, want the %d stored", read, len(good))
	}
}
