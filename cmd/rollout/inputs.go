package main

import (
	"bufio"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rollout-dev/rollout/internal/base/objstore"
	"github.com/rollout-dev/rollout/internal/base/shard"
	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/internal/codex/manifest"
	"github.com/rollout-dev/rollout/rollout"
)

// inputFlags are the flags every command that reads many rollouts shares
// to select them: PATH arguments, --files-from, --shard and --thread (each
// command adds the ones it has).
type inputFlags struct {
	paths     []string
	filesFrom string
	shard     string
	threads   []string
	manifest  string
	shardPart *shard.Spec // --shard, parsed by validate (nil: none)
}

// addManifest adds --manifest FILE, the rollouts rollout plan listed.
func (o *inputFlags) addManifest(f *pflag.FlagSet) {
	f.StringVar(&o.manifest, "manifest", "", "read the rollouts the manifest `FILE` lists (made by rollout plan; a file, - or an s3:// object), with --shard only this shard's slice, instead of walking PATHs")
}

func (o *inputFlags) addFilesFrom(f *pflag.FlagSet) {
	f.StringVar(&o.filesFrom, "files-from", "", "read one path per line from FILE (- for standard input)")
}

// addShard adds --shard K/N; what names the inputs ("files", "rollouts")
// and more adds to the usage.
func (o *inputFlags) addShard(f *pflag.FlagSet, what, more string) {
	f.StringVar(&o.shard, "shard", "", "only the "+what+" whose lineage (the root of its forks and reverts) hashes to shard K of N (`K/N`, 1 <= K <= N)"+more)
}

// addThreads adds the repeatable --thread ID; verb says what the command
// does with the thread's rollout ("also verify").
func (o *inputFlags) addThreads(f *pflag.FlagSet, verb string) {
	f.StringArrayVar(&o.threads, "thread", nil, threadUsage(verb, true))
}

// addThreadFlag adds --thread ID, for a command that reads one rollout.
func addThreadFlag(f *pflag.FlagSet, p *string, verb string) {
	f.StringVar(p, "thread", "", threadUsage(verb, false))
}

// threadUsage is the usage of --thread: the backquoted ID is the value's
// name in the help (--thread ID), so no other backquotes may come first.
func threadUsage(verb string, repeatable bool) string {
	more := ""
	if repeatable {
		more = "repeatable; "
	}
	return verb + " the rollout of thread `ID`, found under $CODEX_HOME (" + more + "see rollout find)"
}

// resolve finds the rollouts to read: arguments, --files-from, --thread,
// or the default Codex directories; walked, deduplicated and sharded
// (lineage.Select).
func (o *inputFlags) resolve(a *app) (*verifyInputs, error) {
	if o.manifest != "" {
		return o.fromManifest(a)
	}
	paths, err := o.named(a)
	if err != nil {
		return nil, err
	}
	sel, err := lineage.Select(paths, o.shardPart)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if slices.Contains(sel.Paths, rollout.StdinPath) {
		a.io.stdinHint("a rollout")
	}
	in := &verifyInputs{paths: sel.Paths, all: sel.All, index: sel.Index, unusable: sel.Unusable}
	in.notes = sel.Notes()
	in.named = make(map[string]bool, len(paths))
	for _, p := range paths {
		in.named[p] = true
	}
	return in, nil
}

// named are the paths the user names: arguments, --files-from's list and
// the rollouts of --thread; without any, the default Codex directories.
func (o *inputFlags) named(a *app) ([]string, error) {
	paths := append([]string(nil), o.paths...)
	if o.filesFrom != "" {
		list, err := o.readFilesFrom(a)
		if err != nil {
			return nil, err
		}
		paths = append(paths, list...)
	}
	threads, err := resolveThreads(o.threads)
	if err != nil {
		return nil, err
	}
	paths = append(paths, threads...)
	switch {
	case len(paths) == 0 && o.filesFrom == "":
		return defaultInputs(a)
	case len(paths) == 0:
		return nil, usageError("", "--files-from %s named no paths", o.filesFrom)
	case o.filesFrom == "-" && slices.Contains(paths, rollout.StdinPath):
		// The list consumed standard input: "-" would read it empty.
		return nil, usageError("name the rollout as a file, or pass the list with --files-from FILE",
			"standard input cannot be both --files-from - and a rollout")
	}
	return paths, nil
}

// readFilesFrom reads --files-from: one path per line, blank lines skipped.
func (o *inputFlags) readFilesFrom(a *app) ([]string, error) {
	var r io.Reader = a.io.In
	if o.filesFrom == "-" {
		a.io.stdinHint("the list of paths")
	} else {
		f, err := os.Open(o.filesFrom)
		if err != nil {
			return nil, usageError("", "reading --files-from: %v", err)
		}
		defer f.Close()
		r = f
	}
	var paths []string
	sc := bufio.NewReader(r)
	for {
		line, err := sc.ReadString('\n')
		if p := strings.TrimRight(line, "\r\n"); strings.TrimSpace(p) != "" {
			paths = append(paths, p)
		}
		if err != nil {
			return paths, nil
		}
	}
}

// defaultInputs are the default Codex home's rollout directories that
// exist, said on standard error when it is a terminal (a script or CI log
// gets only the report).
func defaultInputs(a *app) ([]string, error) {
	dirs, err := codexDirs()
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, d := range dirs {
		if fileExists(d) {
			paths = append(paths, d)
		}
	}
	if len(paths) == 0 {
		return nil, usageError("name a file or directory (- reads standard input), or set CODEX_HOME",
			"no path given, and neither %s nor %s exists", dirs[0], dirs[1])
	}
	if a.io.ErrIsTTY {
		printf(a.io.Err, "reading %s", strings.Join(paths, " and "))
	}
	return paths, nil
}

// verifyInputs are the files to verify and what resolving them found.
type verifyInputs struct {
	paths []string
	// all are the files found before --shard took its part: where the
	// lineages of paths are looked up (index, when --shard built it).
	all   []string
	index *lineage.Index
	// named holds the paths given by the user (arguments, --files-from,
	// the default directories), as opposed to files found by a walk.
	named map[string]bool
	// unusable are entries a walk found and could not use: they are
	// reported as not analysed, never opened.
	unusable []*rollout.WalkError
	notes    []string
	// described and threadIDs are what a manifest recorded of each file:
	// its size and version, its thread (verify --since).
	described map[string]objstore.Object
	threadIDs map[string]string
}

// fromManifest takes the rollouts of --manifest: the slice of --shard,
// read as the plan saw them, with no listing and no head read
// (manifest.Slice).
func (o *inputFlags) fromManifest(a *app) (*verifyInputs, error) {
	if len(o.paths) > 0 || o.filesFrom != "" || len(o.threads) > 0 {
		return nil, usageError("plan every rollout into the manifest instead",
			"--manifest names the rollouts to read: it takes no PATH, --files-from or --thread")
	}
	if o.manifest == rollout.StdinPath {
		a.io.stdinHint("the manifest")
	}
	entries, ix, err := manifest.Slice(o.manifest, a.io.In, o.shardPart)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	in := &verifyInputs{index: ix, named: make(map[string]bool, len(entries)),
		described: make(map[string]objstore.Object, len(entries)), threadIDs: make(map[string]string, len(entries))}
	for i := range entries {
		e := &entries[i]
		in.paths = append(in.paths, e.URI)
		in.named[e.URI] = true
		in.described[e.URI], in.threadIDs[e.URI] = e.Object(), e.ThreadID
	}
	in.all = in.paths
	return in, nil
}
