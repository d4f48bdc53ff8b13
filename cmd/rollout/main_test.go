package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/bloatgen"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
)

// cmdCodexHome: codexhome DIR [BASE] lays out a home Codex 0.171.0 made
// (fixtures/home/base) in DIR: by default one paginated thread, its row,
// its projection; BASE names another (codex-0.171.0-attached).
func cmdCodexHome(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: codexhome dir [base]")
	}
	base := homegen.Base
	if len(args) == 2 {
		base = args[1]
	}
	ts.Check(homegen.Build(ts.MkAbs(args[0]), base))
}

// cmdHomeSQL: homesql DB SQL... runs statements on a database of a home
// (@HOME@ is the database's directory).
func cmdHomeSQL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: homesql db.sqlite statements...")
	}
	db := ts.MkAbs(args[0])
	ts.Check(homegen.Exec(db, strings.ReplaceAll(strings.Join(args[1:], " "), "@HOME@", filepath.Dir(db))))
}

// cmdLineageTree: lineagetree DIR standard|compacted [PREFIX] writes a
// lineage tree of internal/testkit/fixturegen/lineagegen into the Codex home DIR and sets, per
// node NAME, $PREFIXNAME to its path, $PREFIXNAME_ID to its rollout id and
// $PREFIXNAME_THREAD to its thread id (NAME upper case, '-' as '_').
func cmdLineageTree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: lineagetree dir standard|compacted [prefix]")
	}
	tree := map[string]lineagegen.Tree{"standard": lineagegen.Standard, "compacted": lineagegen.Compacted}[args[1]]
	if tree == nil {
		ts.Fatalf("no tree %q", args[1])
	}
	prefix := ""
	if len(args) == 3 {
		prefix = args[2]
	}
	dir := ts.MkAbs(args[0])
	files, err := lineagegen.Write(dir, tree)
	ts.Check(err)
	for name, f := range files {
		v := prefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		ts.Setenv(v, filepath.Join(dir, f.Path))
		ts.Setenv(v+"_ID", f.Rollout)
		ts.Setenv(v+"_THREAD", f.Thread)
	}
}

// TestMain lets the test binary act as `rollout` inside the scripts: testscript
// puts a copy of it on $PATH under that name, and running it calls run()
// exactly as main does (no separate build, same coverage).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"rollout": func() { os.Exit(run(os.Args[1:], systemIO())) },
	})
}

// TestScripts runs the end-to-end scenarios in testdata/script, one per
// behaviour of the command line contract (shared spec cli.md).
// Script names are snake_case, the command first (repair_dry_run.txtar).
//
// Every rollout invocation in them goes through `exitcode N rollout ...`,
// which asserts the exact exit code: testscript's `!` only says "non-zero",
// and the exit codes are part of the contract. stdout and stderr are then
// checked with the usual `stdout`/`stderr` commands.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"exitcode":    cmdExitCode,
			"zstd":        cmdZstd,
			"lsdir":       cmdLsdir,
			"sortlines":   cmdSortLines,
			"bloatgen":    cmdBloatgen,
			"mkfifo":      cmdMkfifo, // unix only: scripts using it start with [!unix] skip
			"jsonschema":  cmdJSONSchema,
			"genrollout":  cmdGenRollout,
			"headc":       cmdHeadC,
			"unzstd":      cmdUnzstd,
			"wholelines":  cmdWholeLines,
			"zstdtail":    cmdZstdTail,
			"codexhome":   cmdCodexHome,
			"homesql":     cmdHomeSQL,
			"lineagetree": cmdLineageTree,
		},
		Condition: func(cond string) (bool, error) {
			if cond == "root" { // scripts that give files to another user
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			// $REPO is the repository root, for scripts that check the
			// files it ships (docs/schema, .pre-commit-hooks.yaml).
			root, err := filepath.Abs("../..")
			env.Setenv("REPO", root)
			// The source root of SARIF and Code Quality is the git work
			// tree holding the working directory: whatever lies above
			// $WORK (a repository holding $TMPDIR) is not the script's.
			env.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(env.WorkDir))
			return err
		},
	})
}

// cmdExitCode: exitcode N PROGRAM [ARGS...] runs PROGRAM like exec and fails
// unless it exits with code N. Its stdout and stderr are kept for the next
// stdout/stderr/cmp commands.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("exitcode does not support !; give the expected code")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: running %s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with code %d, want %d", args[1], got, want)
	}
}

// cmdZstd: zstd SRC DST writes SRC compressed with zstd to DST.
func cmdZstd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: zstd src dst")
	}
	var b bytes.Buffer
	w, err := zstd.NewWriter(&b)
	ts.Check(err)
	_, err = w.Write([]byte(ts.ReadFile(args[0])))
	ts.Check(err)
	ts.Check(w.Close())
	dst := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(dst), 0o777))
	ts.Check(os.WriteFile(dst, b.Bytes(), 0o666))
}

// cmdLsdir: lsdir DIR prints every file and directory under DIR (not DIR
// itself), one slash-separated relative path per line, sorted. With
// `cmp stdout want` it proves that no stray file (temporary, backup) exists.
func cmdLsdir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: lsdir dir")
	}
	out := ts.Stdout() // even when empty: the next `cmp stdout` must see this output
	root := ts.MkAbs(args[0])
	var names []string
	ts.Check(filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			rel += "/"
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	}))
	for _, n := range names {
		out.Write([]byte(n + "\n"))
	}
}

// cmdSortLines: sortlines FILE... prints the lines of all the files, sorted,
// duplicates kept (a multiset union).
func cmdSortLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: sortlines file...")
	}
	out := ts.Stdout()
	var lines []string
	for _, f := range args {
		for l := range strings.Lines(ts.ReadFile(f)) {
			lines = append(lines, strings.TrimSuffix(l, "\n"))
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		out.Write([]byte(l + "\n"))
	}
}

// cmdBloatgen: bloatgen DIR writes internal/testkit/fixturegen/bloatgen's default thread tree
// (a parent with image re-embedding compactions and duplicated command
// output, and two sub-agents) under DIR/sessions.
func cmdBloatgen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: bloatgen dir")
	}
	_, err := bloatgen.Write(ts.MkAbs(args[0]), bloatgen.Options{})
	ts.Check(err)
}
