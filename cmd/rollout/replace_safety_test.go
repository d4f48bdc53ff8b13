package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/testkit/filetest"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/bloatgen"
)

// The line an agent appends (open, write, close) while a command is in its
// last step.
const agentLine = `{"timestamp":"2026-03-10T10:00:00.000Z","type":"event_msg","payload":{"type":"agent_message","message":"written during the switch"}}` + "\n"

// runWithStage runs a rollout command in-process with a stage hook: the
// test forces an interleaving at a named step of the command.
func runWithStage(stage func(string), args ...string) (int, string, string) {
	io, out, errb := testIO("")
	a := &app{io: io}
	var cmd interface {
		SetArgs([]string)
		Execute() error
	}
	switch args[0] {
	case "repair":
		c := newRepairCmd(a, func(ctx context.Context, o *repairOptions) error {
			o.stage = stage
			if o.undo {
				return runUndo(a, o)
			}
			return runRepair(ctx, a, o)
		})
		c.SetOut(io.Out)
		c.SetErr(io.Err)
		c.SilenceErrors, c.SilenceUsage = true, true
		cmd = c
	case "reclaim":
		c := newReclaimCmd(a, func(ctx context.Context, o *reclaimOptions) error {
			o.opts.Stage = stage
			return runReclaim(ctx, a, o)
		})
		c.SetOut(io.Out)
		c.SetErr(io.Err)
		c.SilenceErrors, c.SilenceUsage = true, true
		cmd = c
	}
	cmd.SetArgs(args[1:])
	if err := cmd.Execute(); err != nil {
		return reportError(io, err), out.String(), errb.String()
	}
	return exitOK, out.String(), errb.String()
}

// holding lists the plain files under root that hold line.
func holding(t *testing.T, root, line string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(line)) {
				rel, _ := filepath.Rel(root, p)
				out = append(out, rel)
			}
		}
		return nil
	})
	return out
}

// bloatHome writes a bloatgen Codex home (a parent thread, no sub-agents) and
// returns its root and the rollout.
func bloatHome(t *testing.T) (string, string) {
	t.Helper()
	root := t.TempDir()
	paths, err := bloatgen.Write(root, bloatgen.Options{Turns: 4, SubAgents: -1})
	if err != nil {
		t.Fatal(err)
	}
	return root, paths[0]
}

// appendAt appends agentLine to path when the command reaches stage.
func appendAt(t *testing.T, stage, path string) func(string) {
	return func(s string) {
		if s == stage {
			filetest.Append(t, path, []byte(agentLine))
		}
	}
}

// checkKept: the command that met an append in its last step exits 4 and
// the appended line is in a file (the one it names), never lost.
func checkKept(t *testing.T, root string, code int, stdout, stderr string) {
	t.Helper()
	if code != exitUnsafe {
		t.Errorf("exit %d, want %d\n%s%s", code, exitUnsafe, stdout, stderr)
	}
	where := holding(t, root, agentLine)
	if len(where) == 0 {
		t.Fatalf("the appended line is in no file\n%s%s", stdout, stderr)
	}
	if !strings.Contains(stderr, "grew by") || !strings.Contains(stderr, where[0]) {
		t.Errorf("stderr does not name where the appended bytes are (%v):\n%s", where, stderr)
	}
}

// TestAppendDuringReplaceIsKept: an agent appends a line while each command
// that replaces or removes a rollout is in its final step (forced by the
// stage hook right before the rename or removal). Each exits 4 and the
// line is kept in a named file.
func TestAppendDuringReplaceIsKept(t *testing.T) {
	t.Run("reclaim-write", func(t *testing.T) {
		root, path := bloatHome(t)
		code, o, e := runWithStage(appendAt(t, "switch", path), "reclaim", "--policy", "superseded-checkpoints", "--write", path)
		checkKept(t, root, code, o, e)
	})
	t.Run("reclaim-compress", func(t *testing.T) {
		root, path := bloatHome(t)
		code, o, e := runWithStage(appendAt(t, "switch", path), "reclaim", "--policy", "compress", "--cold-after", "0s", "--write", path)
		checkKept(t, root, code, o, e)
	})
	t.Run("reclaim-undo", func(t *testing.T) {
		root, path := bloatHome(t)
		if code, o, e := runRollout("reclaim", "--policy", "superseded-checkpoints", "--write", path); code != exitOK {
			t.Fatalf("reclaim: exit %d\n%s%s", code, o, e)
		}
		code, o, e := runWithStage(appendAt(t, "switch", path), "reclaim", "--undo", path)
		checkKept(t, root, code, o, e)
	})
	t.Run("reclaim-undo-compressed", func(t *testing.T) {
		root, path := bloatHome(t)
		if code, o, e := runRollout("reclaim", "--policy", "compress", "--cold-after", "0s", "--write", path); code != exitOK {
			t.Fatalf("reclaim: exit %d\n%s%s", code, o, e)
		}
		code, o, e := runWithStage(appendAt(t, "switch", path+".zst"), "reclaim", "--undo", path)
		checkKept(t, root, code, o, e)
	})
	t.Run("repair-undo", func(t *testing.T) {
		dir, path, _ := hostileRepairSetup(t)
		if code, e := runRepairWith(path, nil, "--write"); code != exitOK {
			t.Fatalf("repair: exit %d\n%s", code, e)
		}
		code, o, e := runWithStage(appendAt(t, "switch", path), "repair", "--undo", path)
		checkKept(t, dir, code, o, e)
	})
	t.Run("repair-write-no-backup", func(t *testing.T) {
		dir, path, _ := hostileRepairSetup(t)
		code, o, e := runWithStage(appendAt(t, "switch", path), "repair", "--write", "--no-backup", path)
		checkKept(t, dir, code, o, e)
	})
}

// hostileRepairSetup is a broken rollout in a Codex home's sessions tree.
func hostileRepairSetup(t *testing.T) (root, path string, input []byte) {
	t.Helper()
	input = filetest.BrokenRollout(t, 40_000)
	root = t.TempDir()
	dir := filepath.Join(root, "sessions", "2026", "03", "10")
	os.MkdirAll(dir, 0o755)
	path = filepath.Join(dir, "rollout-2026-03-10T09-35-30-019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90.jsonl")
	if err := os.WriteFile(path, input, 0o644); err != nil {
		t.Fatal(err)
	}
	return root, path, input
}

// TestUndoRestartableAtEveryStep kills each undo (SIGKILL) at every step
// of its work; running it again finishes the undo: the original bytes are
// back and nothing of the repair or reclaim is left.
func TestUndoRestartableAtEveryStep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T) (root, path string, original map[string]string)
		undo   []string
		stages []string
	}{
		{"repair", func(t *testing.T) (string, string, map[string]string) {
			root, path, _ := hostileRepairSetup(t)
			before := filetest.Tree(t, root)
			if code, e := runRepairWith(path, nil, "--write"); code != exitOK {
				t.Fatalf("repair: exit %d\n%s", code, e)
			}
			return root, path, before
		}, []string{"repair", "--undo"}, []string{"checked", "switch", "renamed", "quarantine"}},
		{"reclaim", func(t *testing.T) (string, string, map[string]string) {
			root, path := bloatHome(t)
			before := filetest.Tree(t, root)
			if code, o, e := runRollout("reclaim", "--policy", "superseded-checkpoints", "--write", path); code != exitOK {
				t.Fatalf("reclaim: exit %d\n%s%s", code, o, e)
			}
			return root, path, before
		}, []string{"reclaim", "--undo"}, []string{"checked", "switch", "renamed"}},
		{"reclaim-compressed", func(t *testing.T) (string, string, map[string]string) {
			root, path := bloatHome(t)
			before := filetest.Tree(t, root)
			if code, o, e := runRollout("reclaim", "--policy", "compress", "--cold-after", "0s", "--write", path); code != exitOK {
				t.Fatalf("reclaim: exit %d\n%s%s", code, o, e)
			}
			return root, path, before
		}, []string{"reclaim", "--undo"}, []string{"checked", "switch", "renamed"}},
	} {
		for _, stage := range tc.stages {
			t.Run(tc.name+"/"+stage, func(t *testing.T) {
				root, path, original := tc.setup(t)
				paused := killAtStage(t, stage, append(tc.undo, path)...)
				if !paused {
					t.Fatalf("the helper never reached stage %s", stage)
				}
				code, o, e := runRollout(append(tc.undo, path)...)
				if code != exitOK {
					t.Fatalf("undo again: exit %d\n%s%s", code, o, e)
				}
				if diff := cmp.Diff(original, filetest.Tree(t, root)); diff != "" {
					t.Errorf("after the undo was run again (-original +now):\n%s", diff)
				}
			})
		}
	}
}

// TestUndoRefusesFileOpenForWriting: an agent idle between turns holds its
// rollout open for append; both undos refuse to replace it (exit 4,
// nothing changed) unless --force.
func TestUndoRefusesFileOpenForWriting(t *testing.T) {
	if _, err := os.Stat("/proc/self/fdinfo"); err != nil {
		t.Skip("no /proc: writers are not seen here")
	}
	check := func(t *testing.T, root string, undo ...string) {
		before := filetest.Tree(t, root)
		code, o, e := runRollout(undo...)
		if code != exitUnsafe || !strings.Contains(e, "is open for writing by pid") {
			t.Errorf("exit %d, want %d (open for writing)\n%s%s", code, exitUnsafe, o, e)
		}
		if diff := cmp.Diff(before, filetest.Tree(t, root)); diff != "" {
			t.Errorf("a refused undo changed files:\n%s", diff)
		}
		if code, o, e := runRollout(append(undo[:2:2], append([]string{"--force"}, undo[2:]...)...)...); code != exitOK {
			t.Errorf("--force: exit %d\n%s%s", code, o, e)
		}
	}
	t.Run("repair", func(t *testing.T) {
		root, path, _ := hostileRepairSetup(t)
		if code, e := runRepairWith(path, nil, "--write"); code != exitOK {
			t.Fatalf("repair: exit %d\n%s", code, e)
		}
		filetest.HoldOpen(t, path, os.O_WRONLY|os.O_APPEND)
		check(t, root, "repair", "--undo", path)
	})
	t.Run("reclaim", func(t *testing.T) {
		root, path := bloatHome(t)
		if code, o, e := runRollout("reclaim", "--policy", "superseded-checkpoints", "--write", path); code != exitOK {
			t.Fatalf("reclaim: exit %d\n%s%s", code, o, e)
		}
		filetest.HoldOpen(t, path, os.O_WRONLY|os.O_APPEND)
		check(t, root, "reclaim", "--undo", path)
	})
}

var _ = fmt.Sprint
