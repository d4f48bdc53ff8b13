package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

// The refusals of a file that changes under repair, of a symlink and of a
// failed write, the backups, the compression of -o and the skipped edits
// are the library's: internal/edit/repair/safety_test.go tests them. Here
// the command is killed at each stage of its write.

// repaired is what repair makes of input (through -o, in-process).
func repaired(t *testing.T, input []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.jsonl")
	os.WriteFile(in, input, 0o644)
	if code, o, e := runRollout("repair", "--write", "-o", out, in); code != exitOK {
		t.Fatalf("repair -o: exit %d\n%s%s", code, o, e)
	}
	return filetest.Read(t, out)
}

// runRepairWith runs repair on path with a stage hook; it returns the exit
// code and stderr.
func runRepairWith(path string, stage func(string), extra ...string) (int, string) {
	io, _, errb := testIO("")
	a := &app{io: io}
	cmd := newRepairCmd(a, func(ctx context.Context, o *repairOptions) error {
		o.stage = stage
		return runRepair(ctx, a, o)
	})
	cmd.SetArgs(append(extra, path))
	cmd.SetOut(io.Out)
	cmd.SetErr(io.Err)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	if err == nil {
		return exitOK, errb.String()
	}
	return reportError(io, err), errb.String()
}

// TestRepairHelperProcess is not a test: the crash-safety test and the
// scripts run the binary under test as this process (the test binary
// re-executed), with ROLLOUT_REPAIR_HELPER=1 and the arguments after "--".
// ROLLOUT_REPAIR_PAUSE=STAGE makes repair stop at that stage (it prints
// "PAUSED STAGE" on stderr) until it is killed.
func TestRepairHelperProcess(t *testing.T) {
	if os.Getenv("ROLLOUT_REPAIR_HELPER") != "1" {
		t.Skip("helper process for TestRepairCrashSafety and the repair scripts")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	code := 0
	if pause := os.Getenv("ROLLOUT_REPAIR_PAUSE"); pause != "" && len(args) > 0 && (args[0] == "repair" || args[0] == "reclaim") {
		io := systemIO()
		a := &app{io: io}
		stage := func(s string) {
			if s == pause {
				fmt.Fprintln(os.Stderr, "PAUSED "+s)
				select {}
			}
		}
		var cmd *cobra.Command
		if args[0] == "repair" {
			cmd = newRepairCmd(a, func(ctx context.Context, o *repairOptions) error {
				o.stage = stage
				if o.undo {
					return runUndo(a, o)
				}
				return runRepair(ctx, a, o)
			})
		} else {
			cmd = newReclaimCmd(a, func(ctx context.Context, o *reclaimOptions) error {
				o.opts.Stage = stage
				return runReclaim(ctx, a, o)
			})
		}
		cmd.SetArgs(args[1:])
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		if err := cmd.Execute(); err != nil {
			code = reportError(io, err)
		}
	} else {
		code = run(args, systemIO())
	}
	syscall.Exit(code) // os.Exit(0) is refused inside a test
}

func helperCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestRepairHelperProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "ROLLOUT_REPAIR_HELPER=1")
	return cmd
}

// killAtStage runs rollout ARGS in a helper process that pauses at the
// write stage named, kills it there (SIGKILL) and reports whether it got
// there.
func killAtStage(t *testing.T, stage string, args ...string) bool {
	t.Helper()
	cmd := helperCommand(args...)
	cmd.Env = append(cmd.Env, "ROLLOUT_REPAIR_PAUSE="+stage)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	paused := false
	for sc.Scan() {
		if sc.Text() == "PAUSED "+stage {
			paused = true
			break
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	return paused
}

// TestRepairCrashSafety kills repair --write (SIGKILL) at every stage of
// the write and at random moments: the file is always byte for byte the
// old one or the new one, never a mix.
func TestRepairCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	input := filetest.BrokenRollout(t, 4_000_000)
	want := repaired(t, input)
	if bytes.Equal(want, input) {
		t.Fatal("the repair changes nothing: the test would prove nothing")
	}
	check := func(t *testing.T, path string, mustBe []byte) {
		t.Helper()
		got := filetest.Read(t, path)
		switch {
		case mustBe != nil && !bytes.Equal(got, mustBe):
			t.Errorf("file is %d bytes, neither the expected old or new content", len(got))
		case !bytes.Equal(got, input) && !bytes.Equal(got, want):
			t.Errorf("file is a mix: %d bytes, old %d, new %d", len(got), len(input), len(want))
		}
	}
	stages := map[string][]byte{"analysed": input, "written": input, "backed-up": input, "checked": input,
		"quarantined": input, "renamed": want}
	for stage, mustBe := range stages {
		t.Run(stage, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "rollout.jsonl")
			os.WriteFile(path, input, 0o644)
			paused := killAtStage(t, stage, "repair", "--write", path)
			if !paused {
				t.Fatalf("the helper never reached stage %s", stage)
			}
			check(t, path, mustBe)
		})
	}
	// Kills at arbitrary moments, mid-read and mid-write included.
	for _, delay := range []time.Duration{0, 2, 5, 10, 20, 40, 80, 160} {
		t.Run(fmt.Sprintf("after-%dms", delay), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "rollout.jsonl")
			os.WriteFile(path, input, 0o644)
			cmd := helperCommand("repair", "--write", path)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(delay * time.Millisecond)
			cmd.Process.Signal(syscall.SIGKILL)
			err := cmd.Wait()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
			check(t, path, nil)
		})
	}
}
