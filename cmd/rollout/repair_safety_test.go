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
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/gen"
)

var payloadIDRE = regexp.MustCompile(`"payload":\{"type":"([a-z_]+)","id":"([^"]*)",`)

// brokenRollout is a generated rollout with faults every repair fixes: ids
// deleted and a torn tail, so a repair writes a file and a quarantine.
func brokenRollout(t *testing.T, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Seed: 3, TargetBytes: size}); err != nil {
		t.Fatal(err)
	}
	b := payloadIDRE.ReplaceAll(buf.Bytes(), []byte(`"payload":{"type":"$1",`))
	return append(b, `{"timestamp":"2026-03-10T09:35:30.333Z","type":"event_msg","payload":{"type":"task_st`...)
}

// repaired is what repair makes of input (through -o, in-process).
func repaired(t *testing.T, input []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.jsonl")
	os.WriteFile(in, input, 0o644)
	if code, o, e := runRollout("repair", "--write", "-o", out, in); code != exitOK {
		t.Fatalf("repair -o: exit %d\n%s%s", code, o, e)
	}
	return readFile(t, out)
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

func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Error(err)
		return
	}
	if _, err := f.Write(b); err != nil {
		t.Error(err)
	}
	f.Close()
}

// TestRepairRefusesWhenFileChanges: the agent appends to the rollout while
// repair --write runs. Whenever the append happens after the analysis,
// repair exits 4, the file holds exactly the original bytes plus the
// appended ones, and no temporary file, backup or quarantine survives.
func TestRepairRefusesWhenFileChanges(t *testing.T) {
	input := brokenRollout(t, 300_000)
	extra := []byte("\n{\"timestamp\":\"2026-03-10T09:40:00.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"task_started\"}}\n")
	for _, stage := range []string{"analysed", "written", "backed-up"} {
		t.Run(stage, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "rollout.jsonl")
			os.WriteFile(path, input, 0o644)
			code, stderr := runRepairWith(path, func(s string) {
				if s == stage {
					appendTo(t, path, extra)
				}
			}, "--write")
			if code != exitUnsafe {
				t.Fatalf("exit %d, want %d (refused)\n%s", code, exitUnsafe, stderr)
			}
			if !strings.Contains(stderr, "changed since it was read") {
				t.Errorf("stderr does not say why:\n%s", stderr)
			}
			if got := readFile(t, path); !bytes.Equal(got, append(append([]byte{}, input...), extra...)) {
				t.Errorf("the file is not the original plus the appended bytes")
			}
			if names := listDir(t, dir); !cmp.Equal(names, []string{"rollout.jsonl"}) {
				t.Errorf("files left behind: %v", names)
			}
		})
	}

	// Changes that keep the size: only the mtime (touch), or one byte
	// rewritten in place with the mtime put back (only the hash sees it).
	for name, change := range map[string]func(t *testing.T, path string){
		"touched": func(t *testing.T, path string) {
			now := time.Now().Add(time.Minute)
			os.Chtimes(path, now, now)
		},
		"same-size-same-mtime": func(t *testing.T, path string) {
			fi, _ := os.Stat(path)
			f, _ := os.OpenFile(path, os.O_WRONLY, 0)
			f.WriteAt([]byte("X"), 10)
			f.Close()
			os.Chtimes(path, fi.ModTime(), fi.ModTime())
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "rollout.jsonl")
			os.WriteFile(path, input, 0o644)
			old := time.Now().Add(-time.Hour).Truncate(time.Second)
			os.Chtimes(path, old, old)
			code, stderr := runRepairWith(path, func(s string) {
				if s == "backed-up" {
					change(t, path)
				}
			}, "--write")
			if code != exitUnsafe || !strings.Contains(stderr, "changed since it was read") {
				t.Fatalf("exit %d, want %d\n%s", code, exitUnsafe, stderr)
			}
			if names := listDir(t, dir); !cmp.Equal(names, []string{"rollout.jsonl"}) {
				t.Errorf("files left behind: %v", names)
			}
		})
	}

	// A writer appending continuously from the end of the analysis on.
	t.Run("concurrent-writer", func(t *testing.T) {
		t.Parallel()
		big := brokenRollout(t, 3_000_000)
		dir := t.TempDir()
		path := filepath.Join(dir, "rollout.jsonl")
		os.WriteFile(path, big, 0o644)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var appended bytes.Buffer
		code, stderr := runRepairWith(path, func(s string) {
			if s != "analysed" {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					line := fmt.Appendf(nil, "{\"timestamp\":\"2026-03-10T09:40:00.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"agent_message\",\"message\":\"%d\"}}\n", i)
					appendTo(t, path, line)
					appended.Write(line)
					time.Sleep(200 * time.Microsecond)
				}
			}()
			time.Sleep(time.Millisecond) // at least one append lands
		}, "--write")
		close(stop)
		wg.Wait()
		if code != exitUnsafe {
			t.Fatalf("exit %d, want %d\n%s", code, exitUnsafe, stderr)
		}
		if got := readFile(t, path); !bytes.Equal(got, append(append([]byte{}, big...), appended.Bytes()...)) {
			t.Errorf("the file is not the original plus what the writer appended")
		}
		if names := listDir(t, dir); !cmp.Equal(names, []string{"rollout.jsonl"}) {
			t.Errorf("files left behind: %v", names)
		}
	})
}

// TestRepairRefusals: the cases that must exit 4 with the original
// untouched and nothing left behind.
func TestRepairRefusals(t *testing.T) {
	input := brokenRollout(t, 50_000)
	t.Run("symlink", func(t *testing.T) {
		dir := t.TempDir()
		real := filepath.Join(dir, "real.jsonl")
		os.WriteFile(real, input, 0o644)
		link := filepath.Join(dir, "rollout.jsonl")
		if err := os.Symlink(real, link); err != nil {
			t.Skip(err)
		}
		code, stdout, stderr := runRollout("repair", "--write", link)
		if code != exitUnsafe || !strings.Contains(stderr, "symbolic link") {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link was replaced")
		}
		if !bytes.Equal(readFile(t, real), input) {
			t.Errorf("the target changed")
		}
		if names := listDir(t, dir); !cmp.Equal(names, []string{"real.jsonl", "rollout.jsonl"}) {
			t.Errorf("files left behind: %v", names)
		}
		// Reading through the link is fine: a dry run and -o work.
		if code, _, e := runRollout("repair", link); code != exitOK {
			t.Errorf("dry run through a link: exit %d\n%s", code, e)
		}
	})
	t.Run("write-fails", func(t *testing.T) {
		// The quarantine cannot be written (its name is a directory): the
		// write fails after the temporary file was created.
		dir := t.TempDir()
		path := filepath.Join(dir, "rollout.jsonl")
		os.WriteFile(path, input, 0o644)
		os.Mkdir(path+".quarantine.jsonl", 0o755)
		code, stdout, stderr := runRollout("repair", "--write", path)
		if code != exitUnsafe {
			t.Fatalf("exit %d, want %d\n%s%s", code, exitUnsafe, stdout, stderr)
		}
		if !bytes.Equal(readFile(t, path), input) {
			t.Errorf("the original changed")
		}
		if names := listDir(t, dir); !cmp.Equal(names, []string{"rollout.jsonl", "rollout.jsonl.quarantine.jsonl"}) {
			t.Errorf("files left behind: %v", names)
		}
	})
	t.Run("output-dir-missing", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "rollout.jsonl")
		os.WriteFile(path, input, 0o644)
		code, _, stderr := runRollout("repair", "--write", "-o", filepath.Join(dir, "no", "such", "out.jsonl"), path)
		if code != exitUnsafe {
			t.Fatalf("exit %d, want %d\n%s", code, exitUnsafe, stderr)
		}
		if names := listDir(t, dir); !cmp.Equal(names, []string{"rollout.jsonl"}) {
			t.Errorf("files left behind: %v", names)
		}
	})
}

// TestRepairBackupAndQuarantineAppend: a second write keeps FILE.bak and
// takes FILE.bak.1; the quarantine of an earlier repair is kept and the new
// entries appended.
func TestRepairBackupAndQuarantineAppend(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rollout.jsonl")
	good := "{\"timestamp\":\"2026-03-10T09:35:30.037Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90\"}}\n"
	first := good + "garbage one\n"
	os.WriteFile(path, []byte(first), 0o600)
	os.WriteFile(path+".bak", []byte("an older backup"), 0o600)
	if code, o, e := runRollout("repair", "--write", path); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, o, e)
	}
	second := good + "garbage two\n"
	os.WriteFile(path, []byte(second), 0o600)
	if code, o, e := runRollout("repair", "--write", path); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, o, e)
	}
	if got := string(readFile(t, path)); got != good {
		t.Errorf("file = %q", got)
	}
	for name, want := range map[string]string{".bak": "an older backup", ".bak.1": first, ".bak.2": second} {
		if got := string(readFile(t, path+name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	wantQ := fmt.Sprintf(`{"line":2,"byte_offset":%d,"reason":"line/invalid-json","raw":"garbage one","eol":"\n"}`+"\n"+
		`{"line":2,"byte_offset":%[1]d,"reason":"line/invalid-json","raw":"garbage two","eol":"\n"}`+"\n", len(good))
	if got := string(readFile(t, path+".quarantine.jsonl")); got != wantQ {
		t.Errorf("quarantine:\n%s\nwant:\n%s", got, wantQ)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the original's 0600", fi.Mode().Perm())
	}
	// --no-backup: no FILE.bak.3.
	os.WriteFile(path, []byte(second), 0o600)
	if code, o, e := runRollout("repair", "--write", "--no-backup", path); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, o, e)
	}
	if _, err := os.Stat(path + ".bak.3"); err == nil {
		t.Errorf("--no-backup made a backup")
	}
	if got := string(readFile(t, path)); got != good {
		t.Errorf("file = %q", got)
	}
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
	input := brokenRollout(t, 4_000_000)
	want := repaired(t, input)
	if bytes.Equal(want, input) {
		t.Fatal("the repair changes nothing: the test would prove nothing")
	}
	check := func(t *testing.T, path string, mustBe []byte) {
		t.Helper()
		got := readFile(t, path)
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

// TestRepairCompressionFollowsOutput: with -o, OUT's name decides whether
// the result is compressed, whether or not there is anything to fix.
func TestRepairCompressionFollowsOutput(t *testing.T) {
	clean := []byte("{\"timestamp\":\"2026-03-10T09:35:30.037Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90\"}}\n")
	broken := append(append([]byte{}, clean...), "garbage\n"...)
	for _, tc := range []struct {
		name    string
		input   []byte
		in, out string
	}{
		{"clean zst to plain", clean, "in.jsonl.zst", "out.jsonl"},
		{"clean plain to zst", clean, "in.jsonl", "out.jsonl.zst"},
		{"broken zst to plain", broken, "in.jsonl.zst", "out.jsonl"},
		{"broken plain to zst", broken, "in.jsonl", "out.jsonl.zst"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, tc.in), filepath.Join(dir, tc.out)
			data := tc.input
			if strings.HasSuffix(in, ".zst") {
				data = zstdBytes(t, data)
			}
			os.WriteFile(in, data, 0o644)
			if code, o, e := runRollout("repair", "--write", "-o", out, in); code != exitOK {
				t.Fatalf("exit %d\n%s%s", code, o, e)
			}
			got := readFile(t, out)
			if strings.HasSuffix(out, ".zst") {
				got = unzstdFile(t, out)
			}
			if !bytes.Equal(got, clean) {
				t.Errorf("output %q, want %q", got, clean)
			}
		})
	}
}

// TestRepairSkippedEditsWriteNothing: a fix that cannot be applied (an
// item with two "id" members: readers disagree on which wins) is reported,
// and --write then leaves the file alone: no rewrite, no backup.
func TestRepairSkippedEditsWriteNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rollout.jsonl")
	in := "{\"timestamp\":\"2026-03-10T09:35:30.037Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90\"}}\n" +
		"{\"timestamp\":\"2026-03-10T09:35:30.111Z\",\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"id\":\"msg_019cd6f2-b50b-700b-800b-00000000000b\",\"role\":\"user\",\"content\":\"hi\"}}\n" +
		"{\"timestamp\":\"2026-03-10T09:35:30.112Z\",\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"id\":\"\",\"id\":\"\",\"role\":\"user\",\"content\":\"hi\"}}\n"
	os.WriteFile(path, []byte(in), 0o644)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(path, old, old)
	// "id":"" is an id the API rejects (item/rejected-id, an opt-in fix).
	code, stdout, stderr := runRollout("repair", "--write", "--fix", "default,item/rejected-id", path)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, `line 3  item/rejected-id  not fixed: the object has 2 "id" members`) {
		t.Errorf("the skipped fix is not reported:\n%s", stdout)
	}
	fi, _ := os.Stat(path)
	if string(readFile(t, path)) != in || !fi.ModTime().Equal(old) {
		t.Errorf("the file was rewritten")
	}
	if names := listDir(t, dir); !cmp.Equal(names, []string{"rollout.jsonl"}) {
		t.Errorf("files left behind: %v", names)
	}
}
