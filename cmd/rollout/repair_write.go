package main

import (
	"bufio"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/rollout"
)

// The file side of repair: reading the input with a change-detection hash,
// writing the result through a temporary file, the backup, the quarantine
// and the final check before the atomic rename. Every failure path removes
// what it created; the original is replaced only by the rename.

var (
	errFileChanged = errors.New("the file changed since it was read")
	errWriteFailed = errors.New("writing the result failed")
)

// snapshot is what pass 1 saw of the input: enough to notice any change.
type snapshot struct {
	fi   os.FileInfo // from the open file: inode, size, mtime
	size int64       // bytes read
	hash uint64      // maphash of every byte read (this run's seed)
}

// hashingReader hashes and counts what passes through it (and copies it
// to tee, when set).
type hashingReader struct {
	r   io.Reader
	h   maphash.Hash
	n   int64
	tee *outFile
}

func newHashingReader(r io.Reader, seed maphash.Seed) *hashingReader {
	hr := &hashingReader{r: r}
	hr.h.SetSeed(seed)
	return hr
}

func (hr *hashingReader) Read(p []byte) (int, error) {
	n, err := hr.r.Read(p)
	hr.h.Write(p[:n])
	hr.n += int64(n)
	if hr.tee != nil && n > 0 {
		hr.tee.Write(p[:n]) // its error is reported by finish
	}
	return n, err
}

// decoded wraps the raw file stream in a zstd decoder for .zst paths.
func decoded(path string, raw io.Reader) (io.Reader, func(), error) {
	if !rollout.IsCompressed(path) {
		return raw, func() {}, nil
	}
	dec, err := zstd.NewReader(raw, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, nil, &rollout.PathError{Path: path, Err: fmt.Errorf("opening zstd stream: %w", err)}
	}
	return dec, dec.Close, nil
}

// analyseForRepair is pass 1: the analysis of the file, and its snapshot.
// copyTo, when set, receives a copy of the file's bytes (decompressed when
// decodedCopy).
func analyseForRepair(path string, seed maphash.Seed, opts checks.Options, copyTo *outFile, decodedCopy bool) (*checks.Result, snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, snapshot{}, &exitError{code: exitUsage, err: &rollout.PathError{Path: path, Err: errors.Unwrap(err)}}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, snapshot{}, &exitError{code: exitUsage, err: &rollout.PathError{Path: path, Err: err}}
	}
	raw := newHashingReader(f, seed)
	if !decodedCopy {
		raw.tee = copyTo
	}
	src, done, err := decoded(path, raw)
	if err != nil {
		return nil, snapshot{}, err
	}
	defer done()
	if decodedCopy && copyTo != nil {
		src = io.TeeReader(src, copyTo)
	}
	res, err := checks.RunReader(path, src, opts)
	if err != nil {
		return nil, snapshot{}, err
	}
	if _, err := io.Copy(io.Discard, raw); err != nil {
		return nil, snapshot{}, &rollout.PathError{Path: path, Err: err}
	}
	return res, snapshot{fi: fi, size: raw.n, hash: raw.h.Sum64()}, nil
}

// outFile is a temporary file next to the file it will replace. Writes
// are queued to a goroutine that compresses (.zst) and writes them, and
// starts the disk writeback as it goes: the rewrite and the verification
// go on while the disk works, and the fsync before the rename is short.
type outFile struct {
	path string // the temporary file
	f    *os.File
	ch   chan []byte
	done chan error
	pool sync.Pool
	err  error // the goroutine's error, once finished
}

// createOut creates the temporary file for target. raw: the bytes written
// are the file's bytes as they are (no compression added). writeback:
// start writing to disk early (off for a copy that may be thrown away).
func createOut(target string, raw, writeback bool) (*outFile, error) {
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".repair-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errWriteFailed, err)
	}
	o := &outFile{path: f.Name(), f: f, ch: make(chan []byte, 32), done: make(chan error, 1)}
	wb := &writebackFile{f: f, on: writeback}
	bw := bufio.NewWriterSize(wb, 1<<20)
	var w io.Writer = bw
	var zw *zstd.Encoder
	if rollout.IsCompressed(target) && !raw {
		if zw, err = zstd.NewWriter(bw, zstd.WithEncoderConcurrency(1)); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, fmt.Errorf("%w: %v", errWriteFailed, err)
		}
		w = zw
	}
	go func(ch <-chan []byte) {
		var err error
		for b := range ch {
			if err == nil {
				_, err = w.Write(b)
			}
			o.pool.Put(&b)
		}
		if zw != nil && err == nil {
			err = zw.Close()
		}
		if err == nil {
			err = bw.Flush()
		}
		o.done <- err
	}(o.ch)
	return o, nil
}

// Write queues a copy of p; write errors are reported by finish.
func (o *outFile) Write(p []byte) (int, error) {
	var b []byte
	if v, ok := o.pool.Get().(*[]byte); ok {
		b = (*v)[:0]
	}
	o.ch <- append(b, p...)
	return len(p), nil
}

// wait stops the writer goroutine and returns its error.
func (o *outFile) wait() error {
	if o.ch != nil {
		close(o.ch)
		o.ch = nil
		if err := <-o.done; err != nil {
			o.err = fmt.Errorf("%w: %s: %v", errWriteFailed, o.path, err)
		}
	}
	return o.err
}

// finish completes the file: everything written, mode set, fsynced.
func (o *outFile) finish(mode fs.FileMode) error {
	err := o.wait()
	if err == nil {
		err = o.f.Chmod(mode)
	}
	if err == nil {
		err = o.f.Sync()
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, errWriteFailed) {
		err = fmt.Errorf("%w: %s: %v", errWriteFailed, o.path, err)
	}
	return err
}

func (o *outFile) abort() {
	if o == nil {
		return
	}
	o.wait()
	o.f.Close()
	os.Remove(o.path)
}

// writebackFile starts writing a file to disk every few megabytes.
type writebackFile struct {
	f           *os.File
	on          bool
	off, synced int64
}

func (w *writebackFile) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.off += int64(n)
	if w.on && w.off-w.synced >= 8<<20 {
		startWriteback(w.f, w.synced, w.off-w.synced)
		w.synced = w.off
	}
	return n, err
}

// quarantineFile stages FILE.quarantine.jsonl: the existing entries, then
// this run's, in a temporary file renamed into place with the result.
type quarantineFile struct {
	target string
	out    *outFile
	mode   fs.FileMode
	buf    []byte
}

func (q *quarantineFile) add(e rollout.QuarantineEntry) error {
	if q.out == nil {
		out, err := createOut(q.target, true, false)
		if err != nil {
			return err
		}
		q.out, q.mode = out, 0o600
		if old, err := os.Open(q.target); err == nil {
			if fi, err := old.Stat(); err == nil {
				q.mode = fi.Mode().Perm()
			}
			_, err = io.Copy(q.out, old)
			old.Close()
			if err != nil && !errors.Is(err, errWriteFailed) {
				err = fmt.Errorf("%w: reading %s: %v", errWriteFailed, q.target, err)
			}
			if err != nil {
				return err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: reading %s: %v", errWriteFailed, q.target, err)
		}
	}
	q.buf = e.AppendJSON(q.buf[:0])
	_, err := q.out.Write(q.buf)
	return err
}

// sinks are the temporary files of a write, removed unless committed.
type sinks struct {
	out *outFile
	q   quarantineFile
}

func (s *sinks) abort() {
	if s == nil {
		return
	}
	s.out.abort()
	s.q.out.abort()
}

// rewrite is pass 2: the input streamed through the rewriter into the
// temporary file (with --write) and, at the same time, into the verifier.
func (r *repairRun) rewrite() error {
	o := r.o
	var sink io.Writer = io.Discard
	if o.write {
		out, err := createOut(r.target, false, true)
		if err != nil {
			return &exitError{code: exitUnsafe, err: err, hint: "check the directory of " + r.target + ", or write elsewhere with -o OUT"}
		}
		r.sinks = &sinks{out: out, q: quarantineFile{target: r.qpath}}
		sink = out
	}
	f, err := os.Open(o.path)
	if err != nil {
		r.discard()
		return &exitError{code: exitUsage, err: &rollout.PathError{Path: o.path, Err: errors.Unwrap(err)}}
	}
	defer f.Close()
	raw := newHashingReader(f, r.seed)
	src, done, err := decoded(o.path, raw)
	if err != nil {
		r.discard()
		return err
	}
	defer done()

	// The verifier reads the output as it is written: on two cores the
	// re-verification costs little more than the rewrite itself.
	pr, pw := io.Pipe()
	verified := make(chan error, 1)
	go func() {
		res, err := checks.RunReader(o.path, pr, o.checkOptions(nil))
		io.Copy(io.Discard, pr) // never leave the writer blocked
		r.out = res
		verified <- err
	}()
	bw := bufio.NewWriterSize(pw, 256<<10)
	stats, err := rollout.Rewrite(io.MultiWriter(sink, bw), src, &r.fp.Plan, r.rewriteOptions())
	if err == nil {
		err = bw.Flush()
	}
	pw.CloseWithError(err)
	verr := <-verified
	if err == nil {
		_, err = io.Copy(io.Discard, raw) // what the decoder left unread
	}
	r.stats = stats
	switch {
	case errors.Is(err, errWriteFailed):
		r.refusal = err
	case errors.Is(err, rollout.ErrSourceChanged):
		r.refusal = fmt.Errorf("%w: %v", errFileChanged, err)
	case err != nil:
		r.discard()
		return err
	case raw.n != r.src.size || raw.h.Sum64() != r.src.hash:
		r.refusal = fmt.Errorf("%w: %s was modified between the analysis and the rewrite", errFileChanged, o.path)
	case verr != nil:
		r.discard()
		return verr
	}
	if r.refusal != nil {
		r.discard()
	}
	return nil
}

func (r *repairRun) rewriteOptions() rollout.RewriteOptions {
	return rollout.RewriteOptions{
		MaxLineBytes: r.o.maxLineBytes,
		Reopen:       r.reopen,
		OnChange:     r.onChange,
		OnSkip:       func(s rollout.Skip) { r.skips = append(r.skips, s) },
		OnQuarantine: r.onQuarantine,
	}
}

func (r *repairRun) onQuarantine(e rollout.QuarantineEntry) error {
	r.quarantine = append(r.quarantine, quarantineRec{line: e.Line, offset: e.Offset, reason: e.Reason, bytes: len(e.Raw)})
	if r.sinks == nil {
		return nil
	}
	return r.sinks.q.add(e)
}

// discard removes the temporary files of a write that will not happen.
func (r *repairRun) discard() {
	r.sinks.abort()
	r.sinks = nil
}

// commit puts the result in place: temporary files completed and fsynced,
// the backup made, the input checked unchanged, then the renames and the
// directory fsync. On any failure nothing the run created survives and the
// input is untouched.
func (r *repairRun) commit() (err error) {
	o := r.o
	s := r.sinks
	inPlace := o.output == ""
	defer func() {
		if err != nil {
			s.abort()
			if r.backup != "" {
				os.Remove(r.backup)
				r.backup = ""
			}
		}
	}()
	mode := r.src.fi.Mode().Perm()
	if !inPlace {
		if fi, err := os.Stat(r.target); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	if err := s.out.finish(mode); err != nil {
		return err
	}
	if s.q.out != nil {
		if err := s.q.out.finish(s.q.mode); err != nil {
			return err
		}
	}
	o.at("written")
	if inPlace && !o.noBackup {
		if r.backup, err = makeBackup(o.path); err != nil {
			return fmt.Errorf("%w: keeping a backup: %v", errWriteFailed, err)
		}
	}
	o.at("backed-up")
	var orig *os.File
	if inPlace {
		if orig, err = r.unchanged(); err != nil {
			return err
		}
		defer orig.Close()
	}
	o.at("checked")
	if s.q.out != nil {
		if err := os.Rename(s.q.out.path, s.q.target); err != nil {
			return fmt.Errorf("%w: %v", errWriteFailed, err)
		}
		s.q.out = nil
	}
	o.at("quarantined")
	if err := os.Rename(s.out.path, r.target); err != nil {
		return fmt.Errorf("%w: %v", errWriteFailed, err)
	}
	s.out = nil
	r.wrote = true
	if err := syncDir(filepath.Dir(r.target)); err != nil {
		r.postWarning = fmt.Sprintf("%s was replaced, but syncing its directory failed: %v", r.target, err)
	}
	o.at("renamed")
	if orig != nil {
		// A writer holding the old file open keeps appending to it, not to
		// the new one: say so loudly.
		if fi, err := orig.Stat(); err == nil && fi.Size() != r.src.fi.Size() {
			where := "they are lost from FILE (it was replaced)"
			if r.backup != "" {
				where = "they are in " + r.backup
			}
			r.postWarning = fmt.Sprintf("%s grew by %d bytes while it was being replaced: %s", o.path, fi.Size()-r.src.fi.Size(), where)
		}
	}
	return nil
}

// unchanged checks, right before the rename, that the input is still what
// pass 1 read: the same file (inode), size and mtime, and the same bytes.
// It returns the file open, to notice a writer still appending after it.
func (r *repairRun) unchanged() (*os.File, error) {
	path := r.o.path
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errFileChanged, err)
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0 || !os.SameFile(fi, r.src.fi):
		return nil, fmt.Errorf("%w: %s was replaced by another file", errFileChanged, path)
	case fi.Size() != r.src.fi.Size():
		return nil, fmt.Errorf("%w: %s is now %d bytes, it was %d", errFileChanged, path, fi.Size(), r.src.fi.Size())
	case !fi.ModTime().Equal(r.src.fi.ModTime()):
		return nil, fmt.Errorf("%w: %s was modified at %s", errFileChanged, path, fi.ModTime().Format("15:04:05.000"))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errFileChanged, err)
	}
	h := newHashingReader(f, r.seed)
	if _, err := io.CopyBuffer(io.Discard, h, make([]byte, 1<<20)); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %v", errFileChanged, err)
	}
	if h.n != r.src.size || h.h.Sum64() != r.src.hash {
		f.Close()
		return nil, fmt.Errorf("%w: the content of %s differs from what was read", errFileChanged, path)
	}
	return f, nil
}

// makeBackup keeps the input as FILE.bak (FILE.bak.1, .2, ... when taken):
// a hard link when the file system has them (instant, and the backup is
// the very inode that is replaced), a copy otherwise.
func makeBackup(path string) (string, error) {
	for i := 0; i < 1000; i++ {
		name := path + ".bak"
		if i > 0 {
			name += "." + strconv.Itoa(i)
		}
		err := os.Link(path, name)
		if err == nil {
			return name, nil
		}
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		// No hard links here: copy, never overwriting an existing backup.
		if err := copyNew(path, name); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return "", err
		}
		return name, nil
	}
	return "", errors.New("FILE.bak through FILE.bak.999 all exist")
}

func copyNew(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
