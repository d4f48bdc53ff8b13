package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/rollout-dev/rollout/internal/derive/result"
)

// A Stream writes one format while a run's files arrive, so that memory
// follows the largest file rather than the run. Files must come in report
// order (sorted by path) and each normalized (result.FileResult.Normalize): the
// output is then byte for byte what the format's Printer writes for the
// whole report.
//
// The line formats (text, jsonl, github, codeclimate) write each file as it
// comes. The formats that put totals before the files (json, sarif, junit,
// markdown, html) keep the files' part in a spool, in memory up to
// spoolMemory and then in a temporary file, and write it out on Close.
type Stream struct {
	run *result.Report // Tool, Version, Command, Notes; Suppressed and Hidden read on Close
	t   result.Tally
	fs  formatStream
	err error
}

// formatStream is one format's half of a Stream.
type formatStream interface {
	// file writes or spools one file; t already counts it.
	file(f *result.FileResult, t *result.Tally) error
	// finish writes what is left, with the run's totals.
	finish(run *result.Report, t *result.Tally) error
	// release frees the spool, written out or not.
	release()
}

// NewStream starts writing format to w. run holds what is known of the run
// as a whole (its Files are ignored); its Suppressed and Hidden counts are
// read on Close, so they may grow while files arrive.
func NewStream(format string, w io.Writer, run *result.Report, o Options) (*Stream, error) {
	for _, f := range table() {
		if f.name == format {
			return &Stream{run: run, fs: f.stream(w, o)}, nil
		}
	}
	return nil, fmt.Errorf("unknown format %q (want %s)", format, formatList(Formats()))
}

// File writes one file's result. After an error the Stream ignores further
// files and Close only releases it.
func (s *Stream) File(f *result.FileResult) error {
	if s.err != nil {
		return s.err
	}
	s.t.Add(f)
	s.err = s.fs.file(f, &s.t)
	return s.err
}

// Close writes the rest of the report and releases the spool. It returns
// the first error of the Stream.
func (s *Stream) Close() error {
	defer s.fs.release()
	if s.err != nil {
		return s.err
	}
	s.err = s.fs.finish(s.run, &s.t)
	return s.err
}

// Discard releases the Stream without writing the rest.
func (s *Stream) Discard() { s.fs.release() }

// streamPrinter is the Printer of a format: a Stream fed the whole report.
func streamPrinter(newStream func(io.Writer, Options) formatStream) Printer {
	return func(w io.Writer, r *result.Report, o Options) error {
		s := &Stream{run: r, fs: newStream(w, o)}
		for i := range r.Files {
			if err := s.File(&r.Files[i]); err != nil {
				s.Discard()
				return err
			}
		}
		return s.Close()
	}
}

// spoolMemory is how much of a format's file part a spool keeps in memory
// before it moves it to a temporary file (a variable for the tests).
var spoolMemory = 1 << 20

// spool keeps the part of a report that comes after its totals until they
// are known. The first error writing it is kept and returned by reader.
type spool struct {
	mem  bytes.Buffer
	file *os.File
	bw   *bufio.Writer
	n    int64
	err  error
}

func (s *spool) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.n += int64(len(p))
	if s.file == nil && s.mem.Len()+len(p) <= spoolMemory {
		return s.mem.Write(p)
	}
	if s.file == nil {
		f, err := os.CreateTemp("", "rollout-report-*")
		if err != nil {
			s.err = fmt.Errorf("spooling the report: %w", err)
			return 0, s.err
		}
		s.file, s.bw = f, bufio.NewWriterSize(f, 64<<10)
		s.bw.Write(s.mem.Bytes())
		s.mem = bytes.Buffer{}
	}
	if _, err := s.bw.Write(p); err != nil {
		s.err = fmt.Errorf("spooling the report: %w", err)
		return 0, s.err
	}
	return len(p), nil
}

// empty reports whether nothing was spooled.
func (s *spool) empty() bool { return s.n == 0 }

// reader returns what was spooled, from the start.
func (s *spool) reader() (io.Reader, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.file == nil {
		return bytes.NewReader(s.mem.Bytes()), nil
	}
	if err := s.bw.Flush(); err != nil {
		return nil, fmt.Errorf("spooling the report: %w", err)
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("spooling the report: %w", err)
	}
	return bufio.NewReaderSize(s.file, 64<<10), nil
}

// copyTo writes what was spooled to w.
func (s *spool) copyTo(w io.Writer) error {
	r, err := s.reader()
	if err != nil {
		return err
	}
	_, err = io.Copy(w, r)
	return err
}

func (s *spool) release() {
	s.mem = bytes.Buffer{}
	if s.file != nil {
		s.file.Close()
		os.Remove(s.file.Name())
		s.file = nil
	}
}

// noSpool is embedded by the formats that write as they go.
type noSpool struct{}

func (noSpool) release() {}
