package space

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// spool keeps the per-file rows of a Summary out of the heap: one JSON
// value per file in an unlinked temporary file (nothing is left behind,
// even by a crash), or in memory when no temporary file can be made. The
// rows are written once and read back in order by the per-file reports.
type spool struct {
	f    *os.File
	name string // still to remove at close (the unlink failed)
	w    *bufio.Writer
	mem  bytes.Buffer
	enc  *json.Encoder
	n    int
	err  error
}

func (s *spool) start() {
	f, err := os.CreateTemp("", "rollout-space-*.jsonl")
	if err != nil {
		s.enc = json.NewEncoder(&s.mem)
		return
	}
	s.f = f
	if os.Remove(f.Name()) != nil {
		s.name = f.Name()
	}
	s.w = bufio.NewWriterSize(f, 64<<10)
	s.enc = json.NewEncoder(s.w)
}

func (s *spool) add(f *File) {
	if s.enc == nil {
		s.start()
	}
	row := *f
	row.Cuts, row.Bulk, row.Checkpoints = nil, nil, nil
	if err := s.enc.Encode(&row); err != nil && s.err == nil {
		s.err = fmt.Errorf("spooling the per-file rows: %w", err)
	}
	s.n++
}

// each decodes the rows in the order added.
func (s *spool) each(fn func(*File) error) error {
	if s.err != nil {
		return s.err
	}
	if s.n == 0 {
		return nil
	}
	var r io.Reader = bytes.NewReader(s.mem.Bytes())
	if s.f != nil {
		if err := s.w.Flush(); err != nil {
			return fmt.Errorf("spooling the per-file rows: %w", err)
		}
		end, err := s.f.Seek(0, io.SeekCurrent)
		if err != nil {
			return fmt.Errorf("reading the per-file rows back: %w", err)
		}
		r = bufio.NewReaderSize(io.NewSectionReader(s.f, 0, end), 64<<10)
	}
	dec := json.NewDecoder(r)
	for i := 0; i < s.n; i++ {
		f := new(File)
		if err := dec.Decode(f); err != nil {
			return fmt.Errorf("reading the per-file rows back (row %d of %d): %w", i+1, s.n, err)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

func (s *spool) close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	if s.name != "" {
		err = errors.Join(err, os.Remove(s.name))
	}
	s.f = nil
	return err
}
