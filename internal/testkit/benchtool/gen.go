package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/gen"
)

const stampName = ".benchtool-gen.json"

// genSpec is what the stamp records: the inputs that determine the files.
type genSpec struct {
	GenVersion int    `json:"gen_version"`
	Size       int64  `json:"size"`
	Files      int    `json:"files"`
	FileSize   int64  `json:"file_size"`
	Seed       uint64 `json:"seed"`
}

type genOutput struct {
	Path  string    `json:"path"` // relative to the directory
	Stats gen.Stats `json:"stats"`
}

type stamp struct {
	Spec    genSpec     `json:"spec"`
	Outputs []genOutput `json:"outputs"`
}

type genJob struct {
	rel string
	o   gen.Options
}

func (s genSpec) jobs() []genJob {
	jobs := []genJob{{rel: "big.jsonl", o: gen.Options{Seed: s.Seed, TargetBytes: s.Size}}}
	for i := 0; i < s.Files; i++ {
		// Half legacy, half paginated: both history modes get measured.
		o := gen.Options{Seed: s.Seed*1000 + uint64(i) + 1, TargetBytes: s.FileSize, Paginated: i%2 == 1}
		jobs = append(jobs, genJob{rel: filepath.Join("many", gen.FileName(o)), o: o})
	}
	return jobs
}

func cmdGen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	dir := fs.String("o", "", "output directory (required)")
	size := fs.String("size", "200MB", "size of big.jsonl (at least this much)")
	files := fs.Int("files", 8, "number of files in DIR/many")
	fileSize := fs.String("file-size", "25MB", "size of each file in DIR/many")
	seed := fs.Uint64("seed", 1, "generator seed")
	force := fs.Bool("force", false, "regenerate even if the stamp matches")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if *dir == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: benchtool gen -o DIR [-size 200MB] [-files 8] [-file-size 25MB] [-seed 1] [-force]")
		return exitError(2)
	}
	spec := genSpec{GenVersion: gen.Version, Files: *files, Seed: *seed}
	var err error
	if spec.Size, err = parseSize(*size); err != nil {
		return err
	}
	if spec.FileSize, err = parseSize(*fileSize); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(*dir, "many"), 0o755); err != nil {
		return err
	}
	unlock, err := lockDir(*dir, true)
	if err != nil {
		return err
	}
	defer unlock()
	if st, ok := upToDate(*dir, spec); ok && !*force {
		fmt.Printf("%s: up to date (gen v%d, seed %d)\n", *dir, spec.GenVersion, spec.Seed)
		printOutputs(st.Outputs)
		return nil
	}
	// Remove the old stamp first: a crash mid-way must not leave a stamp
	// that vouches for half-written files. Then stale inputs.
	if err := os.Remove(filepath.Join(*dir, stampName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(*dir, "many", "rollout-*.jsonl"))
	tmps, _ := filepath.Glob(filepath.Join(*dir, "many", "rollout-*.jsonl.tmp"))
	for _, p := range append(old, tmps...) {
		if err := os.Remove(p); err != nil {
			return err
		}
	}

	jobs := spec.jobs()
	outs := make([]genOutput, len(jobs))
	work := make([]func() error, len(jobs))
	for i, j := range jobs {
		work[i] = func() error {
			path := filepath.Join(*dir, j.rel)
			var st gen.Stats
			err := replaceFile(path, func(tmp string) (err error) { st, err = gen.WriteFile(tmp, j.o); return err })
			outs[i] = genOutput{Path: j.rel, Stats: st}
			return err
		}
	}
	start := time.Now()
	if err := runParallel(work); err != nil {
		return err
	}
	var total int64
	for _, o := range outs {
		total += o.Stats.Bytes
	}
	el := time.Since(start)
	fmt.Printf("%s: generated %s in %.1fs (%.0f MB/s on %d workers)\n", *dir, fmtMB(total), el.Seconds(),
		float64(total)/1e6/el.Seconds(), workers())
	printOutputs(outs)

	b, err := json.MarshalIndent(stamp{Spec: spec, Outputs: outs}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*dir, stampName), append(b, '\n'), 0o644)
}

// upToDate reports whether dir holds the files of spec, as recorded by a
// stamp, with their recorded sizes.
func upToDate(dir string, spec genSpec) (stamp, bool) {
	var st stamp
	b, err := os.ReadFile(filepath.Join(dir, stampName))
	if err != nil || json.Unmarshal(b, &st) != nil || st.Spec != spec || len(st.Outputs) != len(spec.jobs()) {
		return st, false
	}
	for i, j := range spec.jobs() {
		o := st.Outputs[i]
		fi, err := os.Stat(filepath.Join(dir, j.rel))
		if o.Path != j.rel || err != nil || fi.Size() != o.Stats.Bytes {
			return st, false
		}
	}
	return st, true
}

func printOutputs(outs []genOutput) {
	for _, o := range outs {
		s := o.Stats
		fmt.Printf("  %-70s %9s  %6d lines  max line %7.2f MB  %3d turns  %2d compactions  %3d images\n",
			o.Path, fmtMB(s.Bytes), s.Lines, float64(s.MaxLineBytes)/1e6, s.Turns, s.Compactions, s.Images)
	}
}

// lockDir takes a lock on dir: exclusive for gen, shared for run, so a
// run never measures files that a concurrent gen is rewriting and two gens
// do not interleave. It waits for the lock.
func lockDir(dir string, exclusive bool) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".benchtool.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		fmt.Fprintf(os.Stderr, "benchtool: waiting for the lock on %s (another gen or run is using it)\n", dir)
		if err := syscall.Flock(int(f.Fd()), how); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", dir, err)
		}
	}
	return func() { f.Close() }, nil
}

// readStamp returns the stamp of a generated directory (for run).
func readStamp(dir string) (stamp, error) {
	var st stamp
	b, err := os.ReadFile(filepath.Join(dir, stampName))
	if err != nil {
		return st, fmt.Errorf("%w (run `benchtool gen -o %s` first)", err, dir)
	}
	return st, json.Unmarshal(b, &st)
}
