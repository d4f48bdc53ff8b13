package repair

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/rollout-dev/rollout/rollout"
)

// WriteDiff runs the plan once more over the input, into a unified diff
// (3 lines of context; `patch -p1` applies it). Call it before Finish: an
// in-place write replaces the input.
func (t *Txn) WriteDiff(w io.Writer) error {
	name := filepath.ToSlash(filepath.Base(t.Path))
	d := &unifiedDiff{w: w, from: "a/" + name, to: "b/" + name, context: 3, maxHunk: 8 << 20}
	if err := t.DiffLines(d.line); err != nil {
		return err
	}
	return d.close()
}

// DiffLines runs the plan once more over the input and hands every line,
// kept ('='), removed ('-') or added ('+'), to on: the stream other diff
// renderings are made from. Call it before Finish.
func (t *Txn) DiffLines(on func(rollout.DiffLine) error) error {
	in, err := t.openInput(nil, nil)
	if err != nil {
		return err
	}
	defer in.Close()
	opts := rollout.RewriteOptions{MaxLineBytes: t.opts.MaxLineBytes, Reopen: t.reopen, OnLine: on}
	if _, err := rollout.Rewrite(io.Discard, in.src, &t.Fixes.Plan, opts); err != nil {
		return fmt.Errorf("writing the diff: %w", err)
	}
	return nil
}

// unifiedDiff turns the line events of a rewrite into unified diff hunks.
// It holds one hunk at a time (flushed early past maxHunk bytes, so a
// renumbering of a whole file never sits in memory).
type unifiedDiff struct {
	w          io.Writer
	from, to   string
	context    int
	maxHunk    int
	headerDone bool
	lastOld    int // the last old line number seen
	lastNew    int
	ring       []diffEntry // equal lines before the next hunk
	hunk       []diffEntry
	after      []diffEntry // equal lines past the trailing context
	open       bool
	trail      int // trailing context lines in the hunk
	baseOld    int
	baseNew    int
	hunkBytes  int
	err        error
}

type diffEntry struct {
	op   byte
	text []byte
	old  int
	new  int
}

func (d *unifiedDiff) line(l rollout.DiffLine) error {
	e := diffEntry{op: l.Op, text: bytes.Clone(l.Text), old: l.Old, new: l.New}
	if e.op == '=' {
		e.op = ' '
	}
	switch e.op {
	case ' ':
		if !d.open {
			d.ring = append(d.ring, e)
			if len(d.ring) > d.context {
				d.ring = d.ring[1:]
			}
		} else if d.trail < d.context {
			d.push(e)
			d.trail++
		} else {
			d.after = append(d.after, e)
			if len(d.after) > d.context {
				// More than 2×context equal lines: the hunk is complete.
				d.flush()
				d.ring = append(d.ring[:0], d.after[1:]...)
				d.after = d.after[:0]
			}
		}
	default:
		if !d.open {
			d.open = true
			d.baseOld, d.baseNew = d.lastOld, d.lastNew
			if len(d.ring) > 0 {
				d.baseOld, d.baseNew = d.ring[0].old-1, d.ring[0].new-1
			}
			for _, c := range d.ring {
				d.push(c)
			}
			d.ring = d.ring[:0]
		}
		for _, c := range d.after {
			d.push(c)
		}
		d.after = d.after[:0]
		d.push(e)
		d.trail = 0
		if d.hunkBytes > d.maxHunk {
			d.flush()
		}
	}
	if e.old > 0 {
		d.lastOld = e.old
	}
	if e.new > 0 {
		d.lastNew = e.new
	}
	return d.err
}

func (d *unifiedDiff) push(e diffEntry) {
	d.hunk = append(d.hunk, e)
	d.hunkBytes += len(e.text)
}

// flush writes the open hunk.
func (d *unifiedDiff) flush() {
	if !d.open {
		return
	}
	var nOld, nNew int
	for _, e := range d.hunk {
		if e.op != '+' {
			nOld++
		}
		if e.op != '-' {
			nNew++
		}
	}
	start := func(base, n int) int {
		if n == 0 {
			return base
		}
		return base + 1
	}
	var b bytes.Buffer
	if !d.headerDone {
		d.headerDone = true
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", d.from, d.to)
	}
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", start(d.baseOld, nOld), nOld, start(d.baseNew, nNew), nNew)
	for _, e := range d.hunk {
		b.WriteByte(e.op)
		switch {
		case e.text == nil:
			b.WriteString("[a line longer than --max-line-bytes]\n")
		case bytes.HasSuffix(e.text, []byte("\n")):
			b.Write(e.text)
		default:
			b.Write(e.text)
			b.WriteString("\n\\ No newline at end of file\n")
		}
	}
	if _, err := d.w.Write(b.Bytes()); err != nil && d.err == nil {
		d.err = err
	}
	last := d.hunk[len(d.hunk)-1]
	d.baseOld, d.baseNew = d.lastOld, d.lastNew
	if last.old > 0 {
		d.baseOld = last.old
	}
	if last.new > 0 {
		d.baseNew = last.new
	}
	d.hunk, d.hunkBytes, d.open, d.trail = d.hunk[:0], 0, false, 0
}

// close writes the last hunk; equal lines past its trailing context are
// not part of it.
func (d *unifiedDiff) close() error {
	d.flush()
	return d.err
}
