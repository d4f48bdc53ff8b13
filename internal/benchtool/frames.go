package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rollout-dev/rollout/fixtures/framegen"
)

// cmdFrames measures frame-log reclamation (frames.md) on the issue's
// stream: one assistant message of 200 increments of 1 KiB in the agent's
// wrapped style, about 40 MiB because every frame carries the partial
// message twice. It prints the bytes before and after
// `rollout repair --fix frames/superseded-bytes` and the time of verify and
// of the repair, and appends the same as a section to -md.
func cmdFrames(args []string) error {
	fs := flag.NewFlagSet("frames", flag.ContinueOnError)
	bin := fs.String("rollout", "", "the rollout binary to measure (required)")
	dir := fs.String("dir", "", "directory for frames.jsonl (required)")
	md := fs.String("md", "", "append the report (Markdown) to this file")
	reps := fs.Int("reps", 3, "repetitions per command (best wall time wins)")
	incs := fs.Int("increments", 200, "delta frames of the stream")
	incBytes := fs.Int("increment-bytes", 1024, "bytes of text per delta")
	timeout := fs.Duration("timeout", 10*time.Minute, "limit per command run")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if *bin == "" || *dir == "" || fs.NArg() > 0 || *reps < 1 || *incs < 1 || *incBytes < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchtool frames -rollout BINARY -dir DIR [-md FILE] [-reps 3] [-increments 200] [-increment-bytes 1024]")
		return exitError(2)
	}
	if p, err := filepath.Abs(*bin); err == nil && strings.ContainsRune(*bin, os.PathSeparator) {
		*bin = p
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	opts := framegen.Options{Blocks: []framegen.BlockSpec{{Kind: framegen.Text, Increments: *incs}}, IncrementBytes: *incBytes}
	in := filepath.Join(*dir, fmt.Sprintf("frames-%dx%d.jsonl", *incs, *incBytes))
	st, err := writeFrames(in, opts)
	if err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "benchtool-frames-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	out := filepath.Join(scratch, "out.jsonl")

	rows := []struct {
		name string
		argv []string
	}{
		{"rollout verify --format json", []string{*bin, "verify", "--format", "json", in}},
		{"rollout repair --fix frames/superseded-bytes --write -o OUT", []string{*bin, "repair", "--fix", "frames/superseded-bytes", "--write", "-o", out, in}},
	}
	best := make([]time.Duration, len(rows))
	rss := make([]int64, len(rows))
	var after, quarantined int64
	for round := 0; round < *reps; round++ {
		for i, r := range rows {
			os.Remove(out)
			os.Remove(out + ".quarantine.jsonl")
			m := measure(r.argv, *timeout)
			fmt.Fprintf(os.Stderr, "  [%d/%d] %-62s %8.3fs  exit %d  rss %d KiB\n", round+1, *reps, r.name, m.wall.Seconds(), m.exit, m.rssKiB)
			if m.err != nil || m.exit < 0 || m.exit > 1 {
				return fmt.Errorf("%s: exit %d %v: %s", r.name, m.exit, m.err, oneLine(m.stderr, 300))
			}
			if best[i] == 0 || m.wall < best[i] {
				best[i] = m.wall
			}
			rss[i] = max(rss[i], m.rssKiB)
			if i == 1 {
				fi, err := os.Stat(out)
				if err != nil {
					return fmt.Errorf("%s wrote nothing: %w", r.name, err)
				}
				after = fi.Size()
				if qi, err := os.Stat(out + ".quarantine.jsonl"); err == nil {
					quarantined = qi.Size()
				}
			}
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n## Frame logs (docs/frames.md)\n\n")
	fmt.Fprintf(&b, "- input: one streamed assistant message of %d increments of %d bytes, agent-wrapped frames (`fixtures/framegen`): %d lines, %d bytes (%s)\n",
		*incs, *incBytes, st.Lines, st.Bytes, fmtMB(st.Bytes))
	fmt.Fprintf(&b, "- after `rollout repair --fix frames/superseded-bytes`: %d bytes (%s, %.1f%% of the input); %d bytes went to OUT.quarantine.jsonl\n\n",
		after, fmtMB(after), 100*float64(after)/float64(st.Bytes), quarantined)
	fmt.Fprintf(&b, "| command | best wall of %d | MB/s | peak RSS MiB |\n|---|---:|---:|---:|\n", *reps)
	for i, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %.3f s | %s | %s |\n", r.name, best[i].Seconds(), fmtRate(float64(st.Bytes)/1e6/best[i].Seconds()), fmtMiB(rss[i]))
	}
	fmt.Print(b.String())
	if *md == "" {
		return nil
	}
	f, err := os.OpenFile(*md, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeFrames generates the log unless path already holds it (the
// generator is deterministic: same options, same size).
func writeFrames(path string, o framegen.Options) (*framegen.Stats, error) {
	st, err := framegen.Write(io.Discard, o)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() == st.Bytes {
		return st, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if st, err = framegen.Write(w, o); err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return st, nil
}
