package rollout

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// longLines is a rollout whose long lines take every path of lineSource:
// longer than the read buffer, with "\r\n", and the last one unterminated.
func longLines() string {
	long := func(c string, n int) string { return `{"s":"` + strings.Repeat(c, n) + `"}` }
	return `{"a":1}` + "\n" +
		long("x", readBufferSize+17) + "\n" +
		"\n" +
		long("y", 2*readBufferSize) + "\r\n" +
		long("v", readBufferSize+100) + "\n" + // fits the last long line's buffer
		`{"b":2}` + "\n" +
		long("z", readBufferSize-8) + "\n" + // fits the buffer, with its "\n" or not
		long("w", 3*readBufferSize+5)
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A plain file is read again by offset, a stream is copied in pieces: both
// give the records the stream gives, whatever the maximum.
func TestReaderLongLinesFileVsStream(t *testing.T) {
	in := longLines()
	p := writeTemp(t, in)
	for _, max := range []int64{0, readBufferSize, 2*readBufferSize + 7, 100} {
		want := readAll(t, strings.NewReader(in), max)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if RereaderOf(f) == nil {
			t.Fatal("a regular file is not re-readable")
		}
		f.Seek(0, io.SeekStart)
		got := readAll(t, f, max)
		f.Close()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("max %d: records of the file differ from those of the stream (-stream +file):\n%.2000s", max, diff)
		}
		// Open's decoded stream passes the file's offsets on.
		o, err := Open(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if RereaderOf(o) == nil {
			t.Error("Open of a plain file is not re-readable")
		}
		got = readAll(t, o, max)
		o.Close()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("max %d: records through Open differ (-stream +file):\n%.2000s", max, diff)
		}
	}
}

// changingFile serves other bytes when read again: a file rewritten in
// place between the scan of a long line and its read.
type changingFile struct {
	io.Reader
	again []byte
}

func (c *changingFile) Rereader() io.ReaderAt { return bytes.NewReader(c.again) }

// noSpare lets the spare long-line buffers go: the next long line is read
// again (hashed) unless it fits the reader's own buffer.
func noSpare() {
	spareLong.mu.Lock()
	clear(spareLong.p[:])
	spareLong.mu.Unlock()
}

// countingAt counts the bytes read again.
type countingAt struct {
	io.ReaderAt
	n *int
}

func (c countingAt) ReadAt(p []byte, off int64) (int, error) {
	*c.n += len(p)
	return c.ReaderAt.ReadAt(p, off)
}

type countingFile struct {
	io.Reader
	at countingAt
}

func (c *countingFile) Rereader() io.ReaderAt { return c.at }

// A long line that fits the last long line's buffer is read once; one
// that does not is read again, whole.
func TestReaderLongLineReadOnceWhenItFits(t *testing.T) {
	in := longLines()
	lines := strings.SplitAfter(in, "\n")
	noSpare()
	n := 0
	rd := NewReader(&countingFile{strings.NewReader(in), countingAt{strings.NewReader(in), &n}}, 0)
	defer rd.Release()
	for {
		if _, err := rd.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	// x, y and w outgrow every buffer before them; v fits y's.
	if want := len(lines[1]) + len(lines[3]) + len(lines[7]); n != want {
		t.Errorf("read again %d bytes, want %d (lines x, y, w)", n, want)
	}
}

func TestReaderLongLineChangedWhileRead(t *testing.T) {
	noSpare()
	in := longLines()
	again := []byte(strings.Replace(in, "x", "X", 1))
	rd := NewReader(&changingFile{strings.NewReader(in), again}, 0)
	defer rd.Release()
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Next(); !errors.Is(err, ErrLineChanged) {
		t.Fatalf("line 2 changed between scan and read: err %v, want ErrLineChanged", err)
	}
	// Truncated: the read again comes short.
	rd = NewReader(&changingFile{strings.NewReader(in), []byte(in[:100])}, 0)
	defer rd.Release()
	rd.Next()
	if _, err := rd.Next(); !errors.Is(err, ErrLineChanged) {
		t.Fatalf("file truncated before line 2 was read: err %v, want ErrLineChanged", err)
	}
}

// allocated returns the bytes f allocates. The test must not run in
// parallel with others: what they allocate would count.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A long line costs about its own size once (issue 11): reading a file
// with one 20 MB line allocates the line and little more. Growing a buffer
// by append allocated 3.6 times the line (the pieces copied into ever
// larger buffers); a stream still costs its pieces and the joined line.
func TestReaderLongLineAllocatesItsSizeOnce(t *testing.T) {
	const line = 20 << 20
	in := `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","output":"` +
		strings.Repeat("o", line) + `"}}` + "\n" + `{"b":2}` + "\n"
	p := writeTemp(t, in)
	read := func(r io.Reader) func() {
		return func() {
			rd := NewReader(r, 0)
			defer rd.Release()
			for {
				rec, err := rd.Next()
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if rec.Shape != ShapeObject {
					t.Fatalf("line %d: shape %v", rec.Line, rec.Shape)
				}
			}
		}
	}
	f, err := Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Each may also allocate a read buffer: sync.Pool may not find the
	// pooled one from another P.
	if got := allocated(read(f)); got > line*5/4+readBufferSize {
		t.Errorf("reading a file with a %d MiB line allocated %.1f MiB, want at most 1.25 times the line and a read buffer", line>>20, float64(got)/(1<<20))
	}
	if got := allocated(read(strings.NewReader(in))); got > line*9/4+readBufferSize {
		t.Errorf("reading a stream with a %d MiB line allocated %.1f MiB, want at most 2.25 times the line and a read buffer", line>>20, float64(got)/(1<<20))
	}
}

// The rewriter reads lines the same way: an oversized line read again from
// the file is copied verbatim like one copied from a stream, and every line
// read in full comes out as it came in.
func TestRewriteLongLinesFileVsStream(t *testing.T) {
	in := longLines()
	p := writeTemp(t, in)
	for _, max := range []int64{0, readBufferSize, 2*readBufferSize + 7, 100} {
		for _, full := range []bool{false, true} {
			opts := RewriteOptions{MaxLineBytes: max}
			if full {
				opts.OnLine = func(DiffLine) error { return nil }
			}
			for _, file := range []bool{true, false} {
				var src io.ReadCloser = io.NopCloser(strings.NewReader(in))
				if file {
					f, err := Open(p, nil)
					if err != nil {
						t.Fatal(err)
					}
					src = f
				}
				var out bytes.Buffer
				st, err := Rewrite(&out, src, &Plan{}, opts)
				src.Close()
				if err != nil {
					t.Fatalf("max %d: %v", max, err)
				}
				if out.String() != in || st.BytesIn != int64(len(in)) {
					t.Errorf("max %d full %v file %v: output (%d bytes, %d read) differs from the input (%d bytes)", max, full, file, out.Len(), st.BytesIn, len(in))
				}
			}
		}
	}
}

func TestRewriteLongLineChangedWhileRead(t *testing.T) {
	in := longLines()
	again := []byte(strings.Replace(in, "x", "X", 1))
	for _, max := range []int64{0, 1 << 20} { // read in full; copied verbatim after a part was held
		noSpare()
		opts := RewriteOptions{MaxLineBytes: max, OnLine: func(DiffLine) error { return nil }}
		_, err := Rewrite(io.Discard, &changingFile{strings.NewReader(in), again}, &Plan{}, opts)
		if !errors.Is(err, ErrSourceChanged) {
			t.Errorf("max %d: line 2 changed between scan and read: err %v, want ErrSourceChanged", max, err)
		}
	}
}

// Readers that run at once each get a spare back: two long-line buffers
// let go of are both taken again, the smallest that fits first, rather than
// one of them being dropped for fresh memory.
func TestLongBufferSpares(t *testing.T) {
	noSpare()
	defer noSpare()
	small, big := make([]byte, 3<<20), make([]byte, 5<<20)
	spare(small)
	spare(big)
	if b := longBuffer(2 << 20); unsafe.SliceData(b[:1]) != unsafe.SliceData(small) {
		t.Errorf("a 2 MiB line got a buffer of %d bytes, not the 3 MiB spare", cap(b))
	}
	if b := longBuffer(4 << 20); unsafe.SliceData(b[:1]) != unsafe.SliceData(big) {
		t.Errorf("a 4 MiB line got a buffer of %d bytes, not the 5 MiB spare", cap(b))
	}
	if b := takeSpare(); b != nil {
		t.Errorf("a spare of %d bytes is left: both were taken", cap(b))
	}
	runtime.KeepAlive(small)
	runtime.KeepAlive(big)
}
