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

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/framegen"
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
	md := fs.String("md", "", "also write the report into this Markdown file (its section `frames`)")
	reps := fs.Int("reps", 5, "rounds: each command runs once per round")
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

	rows := []*row{
		{key: "verify", input: "frames", name: "rollout verify --format json", argv: []string{*bin, "verify", "--format", "json", in}, maxExit: 1, bytes: st.Bytes},
		{key: "repair", input: "frames", name: "rollout repair --fix frames/superseded-bytes --write -o OUT", argv: []string{*bin, "repair", "--fix", "frames/superseded-bytes", "--write", "-o", out, in}, maxExit: 1, bytes: st.Bytes},
	}
	var after, quarantined int64
	for _, r := range rows {
		r.before = func() {
			if fi, err := os.Stat(out); err == nil {
				after = fi.Size()
			}
			if qi, err := os.Stat(out + ".quarantine.jsonl"); err == nil {
				quarantined = qi.Size()
			}
			removeOutputs(out)
		}
	}
	var load loadLog
	runRounds(rows, *reps, *timeout, strings.NewReplacer(), &load)
	for _, r := range rows {
		if r.state != stMeasured {
			return fmt.Errorf("%s: %s: %s", r.name, r.note, oneLine(r.stderr, 300))
		}
	}
	if after == 0 {
		return fmt.Errorf("%s wrote nothing", rows[1].name)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n", commandLine())
	fmt.Fprintf(&b, "- %s\n", load.String())
	fmt.Fprintf(&b, "- input: one streamed assistant message of %d increments of %d bytes, agent-wrapped frames (`internal/testkit/fixturegen/framegen`): %d lines, %d bytes (%s)\n",
		*incs, *incBytes, st.Lines, st.Bytes, fmtMB(st.Bytes))
	fmt.Fprintf(&b, "- after `rollout repair --fix frames/superseded-bytes`: %d bytes (%s, %.1f%% of the input); %d bytes went to OUT.quarantine.jsonl\n\n",
		after, fmtMB(after), 100*float64(after)/float64(st.Bytes), quarantined)
	b.WriteString(rowTable(rows, *reps))
	fmt.Print(b.String())
	if *md == "" {
		return nil
	}
	return writeSection(*md, "frames", b.String())
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
	err = replaceFile(path, func(tmp string) error {
		return createBuffered(tmp, func(w *bufio.Writer) (err error) {
			st, err = framegen.Write(w, o)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}
