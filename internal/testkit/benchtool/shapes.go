package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/gen"
	"github.com/rollout-dev/rollout/rollout"
)

// The shapes of issue 12: what `rollout verify` meets in a real sessions
// directory rather than in one big file. Each is written deterministically
// from its spec (the same spec gives the same bytes).
type shapesSpec struct {
	Version        int    `json:"version"`
	Seed           uint64 `json:"seed"`
	FleetFiles     int    `json:"fleet_files"`
	FleetMedian    int64  `json:"fleet_median"`
	FleetMax       int64  `json:"fleet_max"`
	SmallBytes     int64  `json:"small_bytes"`
	Patches        int    `json:"patches"`
	IDs            int    `json:"ids"`
	MissingIDs     int    `json:"missing_ids"`
	GenVersion     int    `json:"gen_version"`
	FleetSigmaX100 int    `json:"fleet_sigma_x100"`
	LongLine       int64  `json:"long_line"`
	RecordsBytes   int64  `json:"records_bytes"`
	TreeFiles      int    `json:"tree_files"`
	TreeFileBytes  int64  `json:"tree_file_bytes"`
	FewFixes       int    `json:"few_fixes"`
}

const shapesVersion = 3

const shapesStamp = ".benchtool-shapes.json"

// Names of the shape inputs under DIR/shapes.
const (
	shapeFleet       = "fleet"
	shapeSmall       = "small-lines.jsonl"
	shapeWorld       = "worldstate.jsonl"
	shapeWorldEvents = "worldstate-events.jsonl"
	shapeIDs         = "ids.jsonl"
	shapeFixes       = "fixes.jsonl"
	shapeLong        = "longline.jsonl"
	shapeRecords     = "small-records.jsonl"
	shapeTree        = "tree"
	shapeTreeOne     = "tree.jsonl"
	shapeFewFixes    = "fixes-few.jsonl"
)

func cmdShapesGen(args []string) error {
	fs := flag.NewFlagSet("shapes-gen", flag.ContinueOnError)
	dir := fs.String("o", "", "output directory (required); files go to DIR/shapes")
	var s shapesSpec
	fs.IntVar(&s.FleetFiles, "fleet-files", 5000, "files in fleet/")
	fleetMedian := fs.String("fleet-median", "100KB", "median file size of fleet/ (log-normal)")
	fleetMax := fs.String("fleet-max", "200MB", "largest file of fleet/ (one file has this size)")
	fs.IntVar(&s.FleetSigmaX100, "fleet-sigma", 100, "log-normal sigma of the fleet sizes, times 100")
	small := fs.String("small-size", "200MB", "size of small-lines.jsonl")
	long := fs.String("long-line", "60MB", "size of the tool output on the long line of longline.jsonl")
	records := fs.String("records-size", "100MB", "size of small-records.jsonl")
	fs.IntVar(&s.TreeFiles, "tree-files", 5000, "files in tree/ (tree.jsonl holds the same bytes in one file)")
	treeFile := fs.String("tree-file-size", "20KB", "size of each file of tree/")
	fs.IntVar(&s.FewFixes, "few-fixes", 10000, "items without id in fixes-few.jsonl (as many items in all as fixes.jsonl)")
	fs.IntVar(&s.Patches, "patches", 30000, "world-state patches in worldstate.jsonl")
	fs.IntVar(&s.IDs, "ids", 1000000, "items with ids in ids.jsonl")
	fs.IntVar(&s.MissingIDs, "missing-ids", 100000, "items without id in fixes.jsonl (as many again have one)")
	fs.Uint64Var(&s.Seed, "seed", 1, "generator seed")
	force := fs.Bool("force", false, "regenerate even if the stamp matches")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if *dir == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: benchtool shapes-gen -o DIR [-fleet-files 5000] [-fleet-max 200MB] [-small-size 200MB] [-patches 30000] [-ids 1000000] [-missing-ids 100000] [-long-line 60MB]")
		return exitError(2)
	}
	s.Version, s.GenVersion = shapesVersion, gen.Version
	var err error
	if s.FleetMedian, err = parseSize(*fleetMedian); err != nil {
		return err
	}
	if s.FleetMax, err = parseSize(*fleetMax); err != nil {
		return err
	}
	if s.SmallBytes, err = parseSize(*small); err != nil {
		return err
	}
	if s.LongLine, err = parseSize(*long); err != nil {
		return err
	}
	if s.RecordsBytes, err = parseSize(*records); err != nil {
		return err
	}
	if s.TreeFileBytes, err = parseSize(*treeFile); err != nil {
		return err
	}
	root := filepath.Join(*dir, "shapes")
	for _, d := range []string{shapeFleet, shapeTree} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	unlock, err := lockDir(*dir, true)
	if err != nil {
		return err
	}
	defer unlock()
	stampPath := filepath.Join(root, shapesStamp)
	if b, err := os.ReadFile(stampPath); err == nil && !*force {
		var old shapesSpec
		if json.Unmarshal(b, &old) == nil && old == s {
			fmt.Printf("%s: up to date\n", root)
			return nil
		}
	}
	if err := os.Remove(stampPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(root, shapeFleet, "rollout-*"))
	oldTree, _ := filepath.Glob(filepath.Join(root, shapeTree, "rollout-*"))
	for _, p := range append(old, oldTree...) {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	start := time.Now()
	jobs := []func() error{
		func() error { return writeShape(filepath.Join(root, shapeSmall), 1, s, writeSmallLines) },
		func() error { return writeShape(filepath.Join(root, shapeWorld), 2, s, writeWorldState(false)) },
		func() error { return writeShape(filepath.Join(root, shapeWorldEvents), 2, s, writeWorldState(true)) },
		func() error { return writeShape(filepath.Join(root, shapeIDs), 3, s, writeIDs(s.IDs, 0)) },
		func() error {
			return writeShape(filepath.Join(root, shapeFixes), 4, s, writeIDs(s.MissingIDs, s.MissingIDs))
		},
		func() error { return writeShape(filepath.Join(root, shapeLong), 5, s, writeLongLine) },
		func() error { return writeShape(filepath.Join(root, shapeRecords), 6, s, writeSmallRecords) },
		func() error {
			return writeShape(filepath.Join(root, shapeFewFixes), 4, s, writeIDs(2*s.MissingIDs-s.FewFixes, s.FewFixes))
		},
	}
	for i, size := range fleetSizes(s) {
		jobs = append(jobs, func() error { return writeFleetFile(filepath.Join(root, shapeFleet), s, i, size) })
	}
	for i := range s.TreeFiles {
		jobs = append(jobs, func() error { return writeTreeFile(filepath.Join(root, shapeTree), s, i) })
	}
	if err := runParallel(jobs); err != nil {
		return err
	}
	if err := joinTree(filepath.Join(root, shapeTree), filepath.Join(root, shapeTreeOne)); err != nil {
		return err
	}
	fmt.Printf("%s: generated in %.1fs\n", root, time.Since(start).Seconds())
	b, _ := json.MarshalIndent(s, "", "  ")
	return os.WriteFile(stampPath, append(b, '\n'), 0o644)
}

// runParallel runs jobs, workers() at a time, and joins their errors.
func runParallel(jobs []func() error) error {
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers())
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = j()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// workers is how many generators run at once: one a core.
func workers() int { return max(1, runtime.GOMAXPROCS(0)) }

// fleetSizes draws the target sizes of the fleet: log-normal around the
// median, clamped to [5 KB, max], and the first file at max so the tail
// users have (one huge session among thousands) is always there.
func fleetSizes(s shapesSpec) []int64 {
	rng := rand.New(rand.NewPCG(s.Seed, 0xf1ee7))
	sigma := float64(s.FleetSigmaX100) / 100
	sizes := make([]int64, s.FleetFiles)
	for i := range sizes {
		x := float64(s.FleetMedian) * math.Exp(sigma*rng.NormFloat64())
		sizes[i] = int64(min(max(x, 5e3), float64(s.FleetMax)))
	}
	if len(sizes) > 0 {
		sizes[0] = s.FleetMax
	}
	return sizes
}

// fleetFile says how the fleet's file i is generated, and its name.
func fleetFile(s shapesSpec, i int, size int64) (gen.Options, string) {
	o := gen.Options{Seed: s.Seed*100000 + uint64(i) + 7, TargetBytes: size, Paginated: i%4 == 3, Fit: true}
	name := gen.FileName(o)
	if i%2 == 1 {
		name += ".zst"
	}
	return o, name
}

// writeFleetFile writes one generated rollout of about size bytes on disk;
// odd-numbered files are zstd-compressed (.jsonl.zst), as archived sessions
// are, and their compressed size is what meets the target.
func writeFleetFile(dir string, s shapesSpec, i int, size int64) error {
	o, name := fleetFile(s, i, size)
	path := filepath.Join(dir, name)
	return replaceFile(path, func(tmp string) error {
		return createBuffered(tmp, func(bw *bufio.Writer) error {
			var w io.Writer = bw
			var enc *zstd.Encoder
			if strings.HasSuffix(path, ".zst") {
				disk := &countingWriter{w: bw}
				var err error
				if enc, err = zstd.NewWriter(disk, zstd.WithEncoderConcurrency(1)); err != nil {
					return err
				}
				w = enc
				// Flushing ends a zstd block: the file is a little larger than one
				// compressed in one go, and its size is known as it grows.
				o.Size = func() int64 {
					enc.Flush()
					return disk.n
				}
			}
			_, err := gen.Write(w, o)
			if enc != nil {
				if cerr := enc.Close(); err == nil {
					err = cerr
				}
			}
			return err
		})
	})
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeShape writes one shape; stream selects the random sequence (the two
// world-state files share theirs, so they differ only where they should).
func writeShape(path string, stream uint64, s shapesSpec, fn func(*shapeWriter, shapesSpec)) error {
	return replaceFile(path, func(tmp string) error {
		return createBuffered(tmp, func(bw *bufio.Writer) error {
			fn(&shapeWriter{bw: bw, rng: rand.New(rand.NewPCG(s.Seed, stream)),
				ms: time.Date(2026, 4, 7, 9, 0, 0, 0, time.UTC).UnixMilli()}, s)
			return nil
		})
	})
}

// shapeWriter writes envelope-era lines with increasing timestamps.
type shapeWriter struct {
	bw      *bufio.Writer
	rng     *rand.Rand
	ms      int64
	line    []byte
	written int64
	turn    string
}

func (w *shapeWriter) uuid() string {
	var r [10]byte
	for i := range r {
		r[i] = byte(w.rng.Uint32())
	}
	return rollout.NewUUIDv7(w.ms, r)
}

// begin starts a line of the given type; the caller appends the payload
// and calls end.
func (w *shapeWriter) begin(typ string) []byte {
	w.ms += 1 + int64(w.rng.IntN(40))
	l := append(w.line[:0], `{"timestamp":"`...)
	l = time.UnixMilli(w.ms).UTC().AppendFormat(l, "2006-01-02T15:04:05.000Z")
	l = append(l, `","type":"`...)
	l = append(l, typ...)
	return append(l, `","payload":`...)
}

func (w *shapeWriter) end(l []byte) {
	l = append(l, "}\n"...)
	w.bw.Write(l)
	w.written += int64(len(l))
	w.line = l
}

var shapeWords = []string{"the", "build", "fails", "because", "parser", "returns", "an", "error", "for", "empty",
	"input", "tests", "pass", "now", "check", "`go vet`", "file", "\"quoted\"", "line\n", "naïve", "café", "→", "ok"}

// appendText appends a JSON string of about n bytes of prose.
func (w *shapeWriter) appendText(l []byte, n int) []byte {
	var b []byte
	for len(b) < n {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, shapeWords[w.rng.IntN(len(shapeWords))]...)
	}
	return rollout.AppendJSONString(l, string(b))
}

func (w *shapeWriter) meta() {
	l := w.begin("session_meta")
	l = append(l, `{"id":"`...)
	l = append(l, w.uuid()...)
	l = append(l, `","timestamp":"2026-04-07T09:00:00.000Z","cwd":"/home/dev/app","originator":"codex_cli_rs","cli_version":"0.110.0","source":"cli","model_provider":"openai","context_window":{"window_id":"`...)
	l = append(l, w.uuid()...)
	w.end(append(l, `"}}`...))
}

func (w *shapeWriter) startTurn() {
	w.turn = w.uuid()
	w.end(append(w.begin("event_msg"), `{"type":"task_started","turn_id":"`+w.turn+`","model_context_window":258400}`...))
}

func (w *shapeWriter) endTurn() {
	w.end(append(w.begin("event_msg"), `{"type":"task_complete","turn_id":"`+w.turn+`","last_agent_message":null}`...))
}

// message writes a message item; withID false leaves out its id.
func (w *shapeWriter) message(role string, text int, withID bool) {
	l := w.begin("response_item")
	l = append(l, `{"type":"message",`...)
	if withID {
		l = append(l, `"id":"msg_`+w.uuid()+`",`...)
	}
	kind := "output_text"
	if role == "user" {
		kind = "input_text"
	}
	l = append(l, `"role":"`+role+`","content":[{"type":"`+kind+`","text":`...)
	l = w.appendText(l, text)
	w.end(append(l, `}]}`...))
}

func (w *shapeWriter) reasoning(text int, withID bool) {
	l := w.begin("response_item")
	l = append(l, `{"type":"reasoning",`...)
	if withID {
		l = append(l, `"id":"rs_`+w.uuid()+`",`...)
	}
	l = append(l, `"summary":[{"type":"summary_text","text":`...)
	l = w.appendText(l, text)
	w.end(append(l, `}]}`...))
}

func (w *shapeWriter) call(callID, outID bool) {
	id := "call_" + strconv.FormatUint(w.rng.Uint64(), 36)
	l := w.begin("response_item")
	l = append(l, `{"type":"function_call",`...)
	if callID {
		l = append(l, `"id":"fc_`+w.uuid()+`",`...)
	}
	l = append(l, `"name":"shell","arguments":"{\"command\":[\"go\",\"test\",\"./...\"]}","call_id":"`+id+`"}`...)
	w.end(l)
	l = w.begin("response_item")
	l = append(l, `{"type":"function_call_output",`...)
	if outID {
		l = append(l, `"id":"fco_`+w.uuid()+`",`...)
	}
	l = append(l, `"call_id":"`+id+`","output":`...)
	l = w.appendText(l, 80)
	w.end(append(l, '}'))
}

// event writes an event_msg line of 150-400 bytes.
func (w *shapeWriter) event() {
	kinds := []string{"agent_reasoning", "agent_message", "exec_command_output_delta"}
	l := w.begin("event_msg")
	l = append(l, `{"type":"`+kinds[w.rng.IntN(len(kinds))]+`","text":`...)
	l = w.appendText(l, 40+w.rng.IntN(220))
	w.end(append(l, '}'))
}

// writeSmallLines: turns of short event lines, a few items among them.
func writeSmallLines(w *shapeWriter, s shapesSpec) {
	w.meta()
	for w.written < s.SmallBytes {
		w.startTurn()
		w.message("user", 100, true)
		for i := range 20 + w.rng.IntN(40) {
			if i%8 == 7 {
				w.message("assistant", 60+w.rng.IntN(150), true)
			} else {
				w.event()
			}
		}
		w.endTurn()
	}
}

// writeWorldState: a baseline, then s.Patches world-state patches each
// adding keys, each after a short reasoning item (a patch follows history).
// With events, every patch line is replaced by an event_msg line of the
// same size: the difference in verify time is the world-state replay.
func writeWorldState(events bool) func(*shapeWriter, shapesSpec) {
	return func(w *shapeWriter, s shapesSpec) {
		w.meta()
		w.startTurn()
		w.message("user", 100, true)
		w.end(append(w.begin("world_state"), `{"full":true,"state":{"environment":{"cwd":"/home/dev/app","shell":"zsh"},"open_files":{},"turn":0}}`...))
		file := 0
		var patch []byte
		for i := range s.Patches {
			if i > 0 && i%100 == 0 {
				w.endTurn()
				w.startTurn()
				w.message("user", 100, true)
			}
			w.reasoning(60, true)
			patch = append(patch[:0], `{"full":false,"state":{"open_files":{`...)
			for k := range 1 + w.rng.IntN(3) {
				if k > 0 {
					patch = append(patch, ',')
				}
				file++
				patch = fmt.Appendf(patch, `"src/pkg%03d/file%06d.go":{"lines":%d,"dirty":%t}`, file%97, file, w.rng.IntN(2000), w.rng.IntN(2) == 0)
			}
			patch = fmt.Appendf(patch, `},"turn":%d}}`, i)
			l := w.begin("world_state")
			if !events {
				w.end(append(l, patch...))
				continue
			}
			size := len(l) + len(patch)
			l = bytes.Replace(l, []byte(`"type":"world_state"`), []byte(`"type":"event_msg"`), 1)
			l = append(l, `{"type":"agent_reasoning","text":"`...)
			for len(l)+len(`"}`) < size {
				l = append(l, 'x')
			}
			w.end(append(l, `"}`...))
		}
		w.endTurn()
	}
}

// writeIDs: turns of about 20 items, n with ids and missing without (spread
// evenly); the ids make the file one that uses ids, so every missing one is
// a finding that repair fixes.
func writeIDs(n, missing int) func(*shapeWriter, shapesSpec) {
	return func(w *shapeWriter, _ shapesSpec) {
		w.meta()
		total := n + missing
		// Item i lacks its id when it is the first past a multiple of
		// total/missing: every other item when missing is half the total.
		withID := func(i int) bool {
			return missing == 0 || i*missing/total == (i+1)*missing/total
		}
		for item := 0; item < total; {
			w.startTurn()
			w.message("user", 60, withID(item))
			item++
			for k := 0; k < 18 && item < total; k++ {
				switch k % 6 {
				case 0:
					w.call(withID(item), withID(item+1))
					item += 2
					k++
				case 1, 3:
					w.reasoning(60, withID(item))
					item++
				default:
					w.message("assistant", 80, withID(item))
					item++
				}
			}
			w.endTurn()
		}
	}
}

// writeLongLine: a short session whose one tool output is s.LongLine bytes
// of text (issue 11: a line costs about its size once) and has no id, so
// repair edits the long line.
func writeLongLine(w *shapeWriter, s shapesSpec) {
	w.meta()
	w.startTurn()
	w.message("user", 100, true)
	w.reasoning(60, true)
	id := "call_" + strconv.FormatUint(w.rng.Uint64(), 36)
	w.end(append(w.begin("response_item"), `{"type":"function_call","id":"fc_`+w.uuid()+`","name":"shell","arguments":"{\"command\":[\"cat\",\"build.log\"]}","call_id":"`+id+`"}`...))
	l := append(w.begin("response_item"), `{"type":"function_call_output","call_id":"`+id+`","output":`...)
	l = w.appendText(l, int(s.LongLine))
	w.end(append(l, '}'))
	w.message("assistant", 80, true)
	w.endTurn()
}

// fleetFiles lists the fleet's files with their sizes on disk.
func fleetFiles(dir string) ([]string, int64, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "rollout-*.jsonl*"))
	if err != nil {
		return nil, 0, err
	}
	slices.Sort(paths)
	var total int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, 0, err
		}
		total += fi.Size()
	}
	return paths, total, nil
}

// writeSmallRecords: the common shape of issue 28, files of small records
// as Codex 0.110 writes them (items without ids): each model request
// streams a few reasoning deltas, then a reasoning item, a shell call with
// a short output and a token_count event with rate limits; a turn ends
// with the assistant's answer.
func writeSmallRecords(w *shapeWriter, s shapesSpec) {
	w.meta()
	var in, cached, out, reasoning int64
	for w.written < s.RecordsBytes {
		w.startTurn()
		w.end(append(w.begin("turn_context"), `{"cwd":"/home/dev/app","approval_policy":"on-request","sandbox_policy":{"mode":"workspace-write"},"model":"gpt-5-codex","summary":"auto"}`...))
		w.message("user", 60+w.rng.IntN(120), false)
		requests := 2 + w.rng.IntN(8)
		for r := range requests {
			for range 1 + w.rng.IntN(4) {
				l := append(w.begin("event_msg"), `{"type":"agent_reasoning_delta","delta":`...)
				l = w.appendText(l, 10+w.rng.IntN(50))
				w.end(append(l, '}'))
			}
			w.reasoning(40+w.rng.IntN(120), false)
			if r < requests-1 {
				w.call(false, false)
			} else {
				w.message("assistant", 60+w.rng.IntN(200), false)
			}
			// Cumulative usage grows by each request's; the context
			// stays well inside the window.
			last := [4]int64{8000 + int64(w.rng.IntN(4000)), 6000, 50 + int64(w.rng.IntN(400)), int64(w.rng.IntN(200))}
			in, cached, out, reasoning = in+last[0], cached+last[1], out+last[2], reasoning+last[3]
			l := append(w.begin("event_msg"), `{"type":"token_count","info":{"total_token_usage":`...)
			l = appendUsage(l, in, cached, out, reasoning)
			l = append(l, `,"last_token_usage":`...)
			l = appendUsage(l, last[0], last[1], last[2], last[3])
			l = fmt.Appendf(l, `,"model_context_window":258400},"rate_limits":{"primary":{"used_percent":%d.0,"window_minutes":300,"resets_at":1775552400},"secondary":{"used_percent":%d.0,"window_minutes":10080,"resets_at":1776000000},"credits":null,"plan_type":"plus"}}`,
				w.rng.IntN(100), w.rng.IntN(100))
			w.end(l)
		}
		w.endTurn()
	}
}

func appendUsage(l []byte, in, cached, out, reasoning int64) []byte {
	return fmt.Appendf(l, `{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"reasoning_output_tokens":%d,"total_tokens":%d}`,
		in, cached, out, reasoning, in+out)
}

// writeTreeFile writes file i of tree/: a small generated session of about
// s.TreeFileBytes, plain (the per-file cost is measured without zstd's).
func writeTreeFile(dir string, s shapesSpec, i int) error {
	o := gen.Options{Seed: s.Seed*1000003 + uint64(i) + 11, TargetBytes: s.TreeFileBytes, Paginated: i%4 == 3, Fit: true}
	path := filepath.Join(dir, gen.FileName(o))
	return replaceFile(path, func(tmp string) error { _, err := gen.WriteFile(tmp, o); return err })
}

// joinTree writes the files of dir, in name order, one after the other
// into one file: the same bytes as one file (per-file cost = the
// difference).
func joinTree(dir, path string) error {
	paths, _, err := fleetFiles(dir)
	if err != nil {
		return err
	}
	return replaceFile(path, func(tmp string) error {
		return createBuffered(tmp, func(w *bufio.Writer) error {
			for _, p := range paths {
				if err := appendFile(w, p); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

func appendFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
