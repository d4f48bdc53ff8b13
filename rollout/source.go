package rollout

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/internal/base/objstore"
)

// StdinPath names standard input among the inputs.
const StdinPath = "-"

// ErrNoRollouts is returned when a directory holds no rollout files.
var ErrNoRollouts = errors.New("no rollout-*.jsonl or rollout-*.jsonl.zst files")

// PathError is an input that cannot be used; it names the path.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *PathError) Unwrap() error { return e.Err }

// IsCompressed reports whether a path names a zstd rollout.
func IsCompressed(path string) bool { return strings.HasSuffix(path, ".zst") }

// Discovery is what Discover found.
type Discovery struct {
	// Paths are the rollouts to read, in order, without duplicates.
	Paths []string
	// Unusable are entries of walked directories that cannot be analysed:
	// a directory or file that cannot be read, or a FIFO, socket or device
	// named like a rollout (never opened: reading one could hang). They
	// are inputs that could not be analysed, not fatal errors.
	Unusable []*WalkError
	// Ignored are *.jsonl[.zst] files of walked directories not named
	// rollout-*: not read (name them to read them).
	Ignored []string
}

// WalkError is an entry a directory walk found and could not use.
type WalkError struct {
	Path string
	Err  error
}

func (e *WalkError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *WalkError) Unwrap() error { return e.Err }

// ErrNotRegular is a rollout-named entry that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Discover expands inputs into the rollouts to read: files are kept as
// given, directories are walked for rollout-*.jsonl[.zst] (a plain file
// wins over its .zst twin), "-" stays standard input. A symlinked
// directory given as input is walked; symlinks inside are followed to
// files, not to directories. An entry that cannot be read does not stop
// the walk: it is reported in Unusable. The error is for the inputs
// themselves: a path that does not exist, a directory without rollouts.
func Discover(inputs []string) (*Discovery, error) {
	d := &Discovery{}
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			d.Paths = append(d.Paths, p)
		}
	}
	w := walker{readDir: os.ReadDir, stat: os.Stat}
	for _, in := range inputs {
		if in == StdinPath {
			add(in)
			continue
		}
		if objstore.IsURI(in) {
			found, err := discoverObjects(in)
			if err != nil {
				return nil, err
			}
			d.Ignored = append(d.Ignored, found.Ignored...)
			for _, p := range found.Paths {
				add(p)
			}
			continue
		}
		fi, err := os.Stat(in)
		if err != nil {
			return nil, &PathError{in, errors.Unwrap(err)}
		}
		if !fi.IsDir() {
			add(in)
			continue
		}
		w.found, w.unusable, w.ignored = nil, nil, nil
		w.walk(in)
		d.Unusable = append(d.Unusable, w.unusable...)
		d.Ignored = append(d.Ignored, w.ignored...)
		if len(w.found) == 0 && len(w.unusable) == 0 {
			if n := len(w.ignored); n > 0 {
				return nil, &PathError{in, fmt.Errorf("%w (%d *.jsonl files not named rollout-* were skipped: name them to verify them)", ErrNoRollouts, n)}
			}
			return nil, &PathError{in, ErrNoRollouts}
		}
		for _, p := range w.found {
			add(p)
		}
	}
	return d, nil
}

// walker walks one directory tree; readDir and stat are replaceable so
// tests can make any entry fail.
type walker struct {
	readDir func(string) ([]fs.DirEntry, error)
	stat    func(string) (fs.FileInfo, error)

	found, ignored []string
	unusable       []*WalkError
}

func (w *walker) walk(root string) {
	var plain, zst []string
	w.visit(root, &plain, &zst)
	have := make(map[string]bool, len(plain))
	for _, p := range plain {
		have[p] = true
	}
	for _, z := range zst {
		if !have[strings.TrimSuffix(z, ".zst")] {
			plain = append(plain, z)
		}
	}
	sort.Strings(plain)
	w.found = plain
}

func (w *walker) visit(dir string, plain, zst *[]string) {
	entries, err := w.readDir(dir)
	if err != nil {
		// os.ReadDir returns what it read before the error: use it too.
		w.unusable = append(w.unusable, &WalkError{dir, unwrapPath(err)})
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			w.visit(p, plain, zst)
			continue
		}
		kind := rolloutName(e.Name())
		if kind == notJSONL {
			continue
		}
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			fi, err := w.stat(p)
			switch {
			case err != nil && kind != otherJSONL:
				w.unusable = append(w.unusable, &WalkError{p, unwrapPath(err)})
				continue
			case err != nil || fi.IsDir():
				continue // symlinked directories are not followed (loops)
			}
			mode = fi.Mode().Type()
		}
		switch {
		case kind == otherJSONL:
			if mode.IsRegular() {
				w.ignored = append(w.ignored, p)
			}
		case !mode.IsRegular():
			w.unusable = append(w.unusable, &WalkError{p, fmt.Errorf("%w (%s): not read", ErrNotRegular, typeName(mode))})
		case kind == plainRollout:
			*plain = append(*plain, p)
		default:
			*zst = append(*zst, p)
		}
	}
}

func unwrapPath(err error) error {
	if u := errors.Unwrap(err); u != nil {
		if _, ok := err.(*fs.PathError); ok {
			return u
		}
	}
	return err
}

type nameKind int

const (
	notJSONL nameKind = iota
	otherJSONL
	plainRollout
	zstRollout
)

// rolloutName classifies a file name. repair's quarantine
// (FILE.quarantine.jsonl) sits next to the rollout and shares its prefix,
// but holds removed lines, not a thread.
func rolloutName(name string) nameKind {
	jsonl := strings.HasSuffix(name, ".jsonl")
	zst := strings.HasSuffix(name, ".jsonl.zst")
	switch {
	// repair's quarantine (FILE.quarantine.jsonl) and reclaim's archive
	// (FILE.reclaimed.jsonl.zst) sit next to the rollout and share its
	// prefix, but hold removed bytes, not a thread.
	case !jsonl && !zst, strings.HasSuffix(name, ".quarantine.jsonl"), strings.HasSuffix(name, ".reclaimed.jsonl.zst"):
		return notJSONL
	case !strings.HasPrefix(name, "rollout-"):
		return otherJSONL
	case jsonl:
		return plainRollout
	}
	return zstRollout
}

func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// Open opens a rollout for reading, decompressing .zst transparently, with
// the default OpenOptions. stdin is used for "-".
func Open(path string, stdin io.Reader) (io.ReadCloser, error) {
	return OpenWith(path, stdin, OpenOptions{})
}

// OpenOptions tune OpenWith and DecodeWith.
type OpenOptions struct {
	// Force reads a file whose first line is not a JSON object (a damaged
	// first line) instead of refusing it as not a rollout.
	Force bool
	// OnRead, when set, is called with the number of bytes read from the
	// file as stored (compressed for .zst): progress for big files.
	OnRead func(n int)
	// Prefix > 0 says the reader wants about the first Prefix bytes (a
	// fork's inherited part of its source): an object is fetched in ranges
	// from there on, not streamed whole and cut off.
	Prefix int64
}

// OpenWith is Open with options (see DecodeWith).
func OpenWith(path string, stdin io.Reader, opts OpenOptions) (io.ReadCloser, error) {
	var f io.ReadCloser
	if path == StdinPath {
		f = io.NopCloser(stdin)
	} else if objstore.IsURI(path) {
		var obj io.ReadCloser
		var err error
		if opts.Prefix > 0 {
			obj, err = objstore.OpenHead(context.Background(), path, opts.Prefix+headBytes, math.MaxInt64)
		} else {
			obj, err = objstore.Open(context.Background(), path, 0, -1)
		}
		if err != nil {
			return nil, &PathError{path, err}
		}
		f = obj
	} else {
		file, err := os.Open(path)
		if err != nil {
			return nil, &PathError{path, errors.Unwrap(err)}
		}
		fi, err := file.Stat()
		if err == nil && fi.IsDir() {
			file.Close()
			return nil, &PathError{path, errors.New("is a directory")}
		}
		f = file
		if o, ok := objstore.Pinned(path); ok && err == nil && o.Size < fi.Size() {
			// A manifest's file is read as the plan saw it, as an object is.
			f = &pinnedFile{file, io.LimitReader(file, o.Size)}
		}
	}
	var raw io.Reader = f
	if opts.OnRead != nil {
		raw = &countingReader{f, opts.OnRead}
	}
	r, _, err := DecodeWith(path, raw, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	return opened{r, closers{r, f}}, nil
}

// opened is what OpenWith returns: the decoded stream, closing the file too.
type opened struct {
	io.Reader
	io.Closer
}

func (o opened) Rereader() io.ReaderAt { return RereaderOf(o.Reader) }

// pinnedFile is a file read up to the size a manifest recorded.
type pinnedFile struct {
	*os.File
	limited io.Reader
}

func (p *pinnedFile) Read(b []byte) (int, error) { return p.limited.Read(b) }

// Rereader reads the file again by offset (within what was read).
func (p *pinnedFile) Rereader() io.ReaderAt { return &fileAt{p.File, 0} }

type countingReader struct {
	r      io.Reader
	onRead func(int)
}

// Rereader reads again without counting: the bytes were counted once.
func (c *countingReader) Rereader() io.ReaderAt { return RereaderOf(c.r) }

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.onRead(n)
	}
	return n, err
}

type closers []io.Closer

func (cs closers) Close() error {
	var err error
	for _, c := range cs {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Compression is how a rollout's bytes are stored.
type Compression int

const (
	Plain Compression = iota
	Zstd
)

// Decode returns the rollout bytes of raw, the content of path. The first
// bytes decide, not the name: a zstd stream is decompressed whatever the
// path is called (and a .zst path is always read as zstd); gzip, bzip2,
// xz, zip and 7-zip data are refused with an error that is
// ErrUnknownFormat (and ErrCompressed for the compressed streams), which
// would otherwise read as a pile of invalid lines. So is content whose
// first non-blank byte does not open a JSON object (an executable, a PDF,
// an image, text): ErrUnknownFormat and ErrFirstLineNotObject. Closing the
// result releases the decoder, not raw.
func Decode(path string, raw io.Reader) (io.ReadCloser, Compression, error) {
	return DecodeWith(path, raw, OpenOptions{})
}

// DecodeWith is Decode with options: opts.Force reads content whose first
// line is not a JSON object (OnRead is for the caller to count raw with).
func DecodeWith(path string, raw io.Reader, opts OpenOptions) (io.ReadCloser, Compression, error) {
	at := RereaderOf(raw) // before the sniffing reads from raw
	br := sniffBuffers.Get()
	br.Reset(raw)
	magic, _ := br.Peek(MagicLen)
	c, err := Sniff(path, magic)
	if err != nil {
		recycle(&decoded{br: br})
		return nil, c, err
	}
	out := &decoded{Reader: br, br: br}
	if c == Plain {
		out.at = at
	}
	if c == Zstd {
		dec := zstdDecoders.Get()
		if dec == nil {
			dec, err = zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		} else {
			err = dec.Reset(br)
		}
		if err != nil {
			recycle(out) // a decoder that failed to start is dropped
			return nil, Zstd, &PathError{path, fmt.Errorf("opening zstd stream: %w", err)}
		}
		out.dec, out.zbr = dec, sniffBuffers.Get()
		out.zbr.Reset(dec)
		br, out.Reader = out.zbr, out.zbr
	}
	if opts.Force {
		return out, c, nil
	}
	// Judge what the first read brought (the whole head of a file; a pipe
	// may bring less), without waiting for more. A read error here (a
	// corrupt zstd frame) is left for the reader to report with its line.
	br.Peek(1)
	head, _ := br.Peek(min(br.Buffered(), sniffBytes))
	if kind := notRolloutKind(head); kind != "" {
		out.Close()
		return nil, c, &PathError{path, fmt.Errorf("%w (%s): %w", ErrUnknownFormat, kind, ErrFirstLineNotObject)}
	}
	return out, c, nil
}

// ErrFirstLineNotObject is content refused because its first line is not a
// JSON object; OpenOptions.Force reads it anyway.
var ErrFirstLineNotObject = errors.New("its first line is not a JSON object")

// sniffBytes is how much of the content the sniffing looks at.
const sniffBytes = 4096

// notRolloutKind names what content is when its first non-blank byte does
// not open a JSON object, and returns "" when it does (or the content is
// empty or blank: verify reports that as a rollout with no session).
func notRolloutKind(head []byte) string {
	for _, m := range []struct {
		prefix string
		kind   string
	}{
		{"\x7fELF", "an ELF executable"},
		{"MZ", "a Windows executable"},
		{"\xcf\xfa\xed\xfe", "a Mach-O executable"},
		{"\xca\xfe\xba\xbe", "a Mach-O or Java class file"},
		{"%PDF", "a PDF document"},
		{"\x89PNG", "a PNG image"},
		{"\xff\xd8\xff", "a JPEG image"},
		{"GIF8", "a GIF image"},
		{"RIFF", "a RIFF file (WebP, WAV, AVI)"},
		{"SQLite format 3\x00", "an SQLite database"},
	} {
		if bytes.HasPrefix(head, []byte(m.prefix)) {
			return m.kind
		}
	}
	if len(head) > 262 && string(head[257:262]) == "ustar" {
		return "a tar archive"
	}
	rest := bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")) // a UTF-8 byte-order mark
	rest = bytes.TrimLeft(rest, " \t\r\n")
	switch {
	case len(rest) == 0 || rest[0] == '{':
		return ""
	case rest[0] == '[':
		return "a JSON array, not JSON lines"
	case bytes.IndexByte(head, 0) < 0 && utf8.Valid(trimPartialRune(head)):
		return "text"
	}
	return "binary data"
}

// trimPartialRune drops a UTF-8 sequence cut by the end of the sniffed bytes.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= min(3, len(b)); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// MagicLen is how many leading bytes Sniff needs.
const MagicLen = 6

// Sniff tells from the first MagicLen bytes of path's content how it is
// stored (see Decode).
func Sniff(path string, magic []byte) (Compression, error) {
	if kind, compressed := archiveKind(magic); kind != "" {
		return Plain, &PathError{path, &formatError{kind, compressed}}
	}
	if IsCompressed(path) || bytes.HasPrefix(magic, zstdMagic) {
		return Zstd, nil
	}
	return Plain, nil
}

// ErrUnknownFormat is an input that is not a rollout in a format rollout reads.
var ErrUnknownFormat = errors.New("not a rollout")

// ErrCompressed is a rollout compressed with a format rollout does not
// read (gzip, bzip2, xz): it reads once decompressed.
var ErrCompressed = errors.New("compressed with a format rollout does not read")

type formatError struct {
	kind       string
	compressed bool
}

func (e *formatError) Error() string {
	return ErrUnknownFormat.Error() + ": " + e.kind + " data (decompress it first; rollout reads .jsonl and .jsonl.zst)"
}

func (e *formatError) Is(target error) bool {
	return target == ErrUnknownFormat || (e.compressed && target == ErrCompressed)
}

var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// archiveKind names the compressed or archive formats a rollout is
// sometimes shipped in, by their magic bytes; compressed is true for a
// compressed stream of one file (as opposed to an archive).
func archiveKind(magic []byte) (kind string, compressed bool) {
	for _, m := range []struct {
		prefix     string
		kind       string
		compressed bool
	}{
		{"\x1f\x8b", "gzip-compressed", true},
		{"BZh", "bzip2-compressed", true},
		{"\xfd7zXZ\x00", "xz-compressed", true},
		{"PK\x03\x04", "zip", false},
		{"7z\xbc\xaf\x27\x1c", "7-zip", false},
	} {
		if bytes.HasPrefix(magic, []byte(m.prefix)) {
			return m.kind, m.compressed
		}
	}
	return "", false
}

// Buffers and zstd decoders are recycled across files: a new decoder per
// file was 14% of verifying a directory of archived sessions.
var (
	sniffBuffers = freeList[*bufio.Reader]{New: func() *bufio.Reader { return bufio.NewReaderSize(nil, 64<<10) }}
	zstdDecoders freeList[*zstd.Decoder]
)

// decoded is what DecodeWith returns; Close recycles its buffers and
// decoder.
type decoded struct {
	io.Reader
	br, zbr *bufio.Reader // the raw bytes; the decompressed ones (zstd only)
	dec     *zstd.Decoder
	at      io.ReaderAt // plain content that can be read again
}

func (d *decoded) Rereader() io.ReaderAt { return d.at }

func (d *decoded) Close() error {
	if d.br != nil {
		recycle(d)
		d.Reader, d.br, d.zbr, d.dec, d.at = eofReader{}, nil, nil, nil, nil
	}
	return nil
}

func recycle(d *decoded) {
	if d.dec != nil && d.dec.Reset(nil) == nil {
		zstdDecoders.Put(d.dec)
	}
	for _, b := range []*bufio.Reader{d.br, d.zbr} {
		if b != nil {
			b.Reset(nil)
			sniffBuffers.Put(b)
		}
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
