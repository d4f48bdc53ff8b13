package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
	"github.com/tidwall/gjson"
)

// readBufSize is the bufio buffer of the line readers. Longer lines are
// accumulated, so there is no cap on line length.
const readBufSize = 1 << 20

// eachLine calls fn for every line of r without its "\n" (or "\r\n"),
// blank lines included. The slice is only valid during the call.
func eachLine(r io.Reader, fn func(line []byte)) error {
	return new(lineReader).each(r, fn)
}

// lineReader is eachLine with its buffers kept from one file to the next,
// as a tool reading a tree of files keeps them (a fair floor does not pay
// 1 MiB of fresh buffer per file).
type lineReader struct {
	br   *bufio.Reader
	long []byte
}

func (lr *lineReader) each(r io.Reader, fn func(line []byte)) error {
	if lr.br == nil {
		lr.br = bufio.NewReaderSize(r, readBufSize)
	} else {
		lr.br.Reset(r)
	}
	br := lr.br
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			lr.long = append(lr.long, b...)
			continue
		}
		if len(lr.long) > 0 {
			lr.long = append(lr.long, b...)
			b = lr.long
		}
		if len(b) > 0 {
			b = bytes.TrimSuffix(b, []byte{'\n'})
			b = bytes.TrimSuffix(b, []byte{'\r'})
			fn(b)
		}
		lr.long = lr.long[:0]
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

type scanResult struct {
	lines, blank, invalid int64
	sink                  int // keeps the Gets from being optimised away
}

func scanReader(r io.Reader) (scanResult, error) { return new(lineReader).scan(r) }

func (lr *lineReader) scan(r io.Reader) (scanResult, error) {
	var res scanResult
	err := lr.each(r, func(line []byte) {
		res.lines++
		if len(line) == 0 {
			res.blank++
			return
		}
		if !gjson.ValidBytes(line) || !utf8.Valid(line) {
			res.invalid++
			return
		}
		res.sink += len(gjson.GetBytes(line, "type").Raw) +
			len(gjson.GetBytes(line, "payload.type").Raw) +
			len(gjson.GetBytes(line, "timestamp").Raw)
	})
	return res, err
}

// cmdScan is the "validate and route" baseline of docs/performance.md.
func cmdScan(args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: benchtool gjson-scan FILE...")
		return exitError(2)
	}
	var total scanResult
	paths, err := expandInputs(args)
	if err != nil {
		return err
	}
	var lr lineReader
	var dec decoder
	defer dec.close()
	for _, p := range paths {
		var res scanResult
		err := dec.open(p, func(r io.Reader) error {
			var err error
			res, err = lr.scan(r)
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		total.lines += res.lines
		total.blank += res.blank
		total.invalid += res.invalid
		total.sink += res.sink
	}
	fmt.Printf("%d lines (%d blank, %d invalid)\n", total.lines, total.blank, total.invalid)
	if total.sink < 0 {
		fmt.Println(total.sink)
	}
	return nil
}

// expandInputs replaces each directory by the rollout-*.jsonl[.zst] files
// under it, in walk (name) order.
func expandInputs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		// Walked whole: a Codex home keeps its rollouts in
		// sessions/YYYY/MM/DD and archived_sessions/.
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && strings.HasPrefix(d.Name(), "rollout-") &&
				(strings.HasSuffix(d.Name(), ".jsonl") || strings.HasSuffix(d.Name(), ".jsonl.zst")) {
				out = append(out, p)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decoder opens files, decompressing zstd ones (the fleet baselines read
// what verify reads) with one decoder reset for each file, as a tool
// reading many files would: a decoder made per file cost more than the
// scan of a small file.
type decoder struct{ zr *zstd.Decoder }

// open calls fn with the content of path.
func (d *decoder) open(path string, fn func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if !strings.HasSuffix(path, ".zst") {
		return fn(f)
	}
	if d.zr == nil {
		if d.zr, err = zstd.NewReader(f, zstd.WithDecoderConcurrency(1)); err != nil {
			return err
		}
	} else if err := d.zr.Reset(f); err != nil {
		return err
	}
	return fn(d.zr)
}

func (d *decoder) close() {
	if d.zr != nil {
		d.zr.Close()
	}
}

// cmdCat writes the decompressed content of files and directories to
// stdout: the input of the `jq -c .type` baseline over the fleet.
func cmdCat(args []string) error {
	paths, err := expandInputs(args)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	var dec decoder
	defer dec.close()
	for _, p := range paths {
		if err := dec.open(p, func(r io.Reader) error { _, err := io.Copy(w, r); return err }); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return w.Flush()
}

// cmdProfile prints what a file is made of: bytes and lines per record
// type and a line size histogram.
func cmdProfile(args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: benchtool profile FILE...")
		return exitError(2)
	}
	type agg struct {
		lines int64
		bytes int64
		max   int
	}
	for _, p := range args {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		byType := map[string]*agg{}
		buckets := []int{1 << 10, 16 << 10, 256 << 10, 1 << 20, 4 << 20, 1 << 62}
		hist := make([]agg, len(buckets))
		var all agg
		err = eachLine(f, func(line []byte) {
			k := gjson.GetBytes(line, "type").String()
			if pt := gjson.GetBytes(line, "payload.type"); pt.Type == gjson.String {
				k += "/" + pt.Str
			}
			a := byType[k]
			if a == nil {
				a = &agg{}
				byType[k] = a
			}
			for _, x := range []*agg{a, &all} {
				x.lines++
				x.bytes += int64(len(line)) + 1
				x.max = max(x.max, len(line))
			}
			for i, b := range buckets {
				if len(line) < b {
					hist[i].lines++
					hist[i].bytes += int64(len(line)) + 1
					break
				}
			}
		})
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		keys := make([]string, 0, len(byType))
		for k := range byType {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return byType[keys[i]].bytes > byType[keys[j]].bytes })
		fmt.Printf("%s: %d lines, %s, longest line %d bytes\n", p, all.lines, fmtMB(all.bytes), all.max)
		fmt.Printf("  %-42s %8s %7s %12s %6s\n", "type", "lines", "lines%", "bytes", "bytes%")
		for _, k := range keys {
			a := byType[k]
			fmt.Printf("  %-42s %8d %6.1f%% %12d %5.1f%%  (max %d)\n", k, a.lines,
				100*float64(a.lines)/float64(all.lines), a.bytes, 100*float64(a.bytes)/float64(all.bytes), a.max)
		}
		names := []string{"< 1 KiB", "< 16 KiB", "< 256 KiB", "< 1 MiB", "< 4 MiB", ">= 4 MiB"}
		for i, h := range hist {
			fmt.Printf("  line %-10s %8d lines %6.1f%% of bytes\n", names[i], h.lines, 100*float64(h.bytes)/float64(all.bytes))
		}
	}
	return nil
}
