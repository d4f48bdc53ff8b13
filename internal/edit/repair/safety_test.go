package repair_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

// TestRepairRefusesWhenFileChanges: the agent appends to the rollout while
// repair --write runs. Whenever the append happens after the analysis,
// repair exits 4, the file holds exactly the original bytes plus the
// appended ones, and no temporary file, backup or quarantine survives.
func TestRepairRefusesWhenFileChanges(t *testing.T) {
	input := filetest.BrokenRollout(t, 300_000)
	extra := []byte("\n{\"timestamp\":\"2026-03-10T09:40:00.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"task_started\"}}\n")
	for _, stage := range []string{"analysed", "written", "backed-up"} {
		t.Run(stage, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "rollout.jsonl")
			os.WriteFile(path, input, 0o644)
			_, r, err := writeInPlace(path, func(s string) {
				if s == stage {
					filetest.Append(t, path, extra)
				}
			})
			if !refusedUnsafe(r) {
				t.Fatalf("refusal %v (%v), want one (exit 4)", r, err)
			}
			if !strings.Contains(r.Error(), "changed since it was read") {
				t.Errorf("the refusal does not say why: %v", r)
			}
			if got := filetest.Read(t, path); !bytes.Equal(got, append(append([]byte{}, input...), extra...)) {
				t.Errorf("the file is not the original plus the appended bytes")
			}
			if names := filetest.List(t, dir); !cmp.Equal(names, []string{"rollout.jsonl"}) {
				t.Errorf("files left behind: %v", names)
			}
		})
	}
}

// TestRepairRefusesSameSizeChanges: changes that keep the size, only the
// mtime (touch), or one byte rewritten in place with the mtime put back
// (only the hash sees it), are refused too.
func TestRepairRefusesSameSizeChanges(t *testing.T) {
	input := filetest.BrokenRollout(t, 300_000)
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
			_, r, err := writeInPlace(path, func(s string) {
				if s == "backed-up" {
					change(t, path)
				}
			})
			if !refusedUnsafe(r) || !strings.Contains(r.Error(), "changed since it was read") {
				t.Fatalf("refusal %v (%v), want the file changed (exit 4)", r, err)
			}
			if names := filetest.List(t, dir); !cmp.Equal(names, []string{"rollout.jsonl"}) {
				t.Errorf("files left behind: %v", names)
			}
		})
	}
}

// TestRepairRefusesConcurrentWriter: a writer appending continuously from
// the end of the analysis on.
func TestRepairRefusesConcurrentWriter(t *testing.T) {
	t.Parallel()
	big := filetest.BrokenRollout(t, 3_000_000)
	dir := t.TempDir()
	path := filepath.Join(dir, "rollout.jsonl")
	os.WriteFile(path, big, 0o644)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var appended bytes.Buffer
	_, r, err := writeInPlace(path, func(s string) {
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
				filetest.Append(t, path, line)
				appended.Write(line)
				time.Sleep(200 * time.Microsecond)
			}
		}()
		time.Sleep(time.Millisecond) // at least one append lands
	})
	close(stop)
	wg.Wait()
	if !refusedUnsafe(r) {
		t.Fatalf("refusal %v (%v), want one (exit 4)", r, err)
	}
	if got := filetest.Read(t, path); !bytes.Equal(got, append(append([]byte{}, big...), appended.Bytes()...)) {
		t.Errorf("the file is not the original plus what the writer appended")
	}
	if names := filetest.List(t, dir); !cmp.Equal(names, []string{"rollout.jsonl"}) {
		t.Errorf("files left behind: %v", names)
	}
}

// TestRepairRefusals: the cases that must exit 4 with the original
// untouched and nothing left behind.
func TestRepairRefusals(t *testing.T) {
	input := filetest.BrokenRollout(t, 50_000)
	t.Run("symlink", func(t *testing.T) {
		dir := t.TempDir()
		real := filepath.Join(dir, "real.jsonl")
		os.WriteFile(real, input, 0o644)
		link := filepath.Join(dir, "rollout.jsonl")
		if err := os.Symlink(real, link); err != nil {
			t.Skip(err)
		}
		_, r, err := writeInPlace(link, nil)
		if !refusedUnsafe(r) || !strings.Contains(r.Error(), "symbolic link") {
			t.Fatalf("refusal %v (%v), want a symbolic link (exit 4)", r, err)
		}
		if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link was replaced")
		}
		if !bytes.Equal(filetest.Read(t, real), input) {
			t.Errorf("the target changed")
		}
		if names := filetest.List(t, dir); !cmp.Equal(names, []string{"real.jsonl", "rollout.jsonl"}) {
			t.Errorf("files left behind: %v", names)
		}
		// Reading through the link is fine: a dry run and Output work.
		if o, _, err := repairWrite(repair.Options{Path: link}); err != nil || exitOf(o) != 0 {
			t.Errorf("dry run through a link: %v, exit %d", err, exitOf(o))
		}
	})
	t.Run("write-fails", func(t *testing.T) {
		// The quarantine cannot be written (its name is a directory): the
		// write fails after the temporary file was created.
		dir := t.TempDir()
		path := filepath.Join(dir, "rollout.jsonl")
		os.WriteFile(path, input, 0o644)
		os.Mkdir(path+".quarantine.jsonl", 0o755)
		if _, r, err := writeInPlace(path, nil); !refusedUnsafe(r) {
			t.Fatalf("refusal %v (%v), want one (exit 4)", r, err)
		}
		if !bytes.Equal(filetest.Read(t, path), input) {
			t.Errorf("the original changed")
		}
		if names := filetest.List(t, dir); !cmp.Equal(names, []string{"rollout.jsonl", "rollout.jsonl.quarantine.jsonl"}) {
			t.Errorf("files left behind: %v", names)
		}
	})
	t.Run("output-dir-missing", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "rollout.jsonl")
		os.WriteFile(path, input, 0o644)
		o, _, err := repairWrite(repair.Options{Path: path, Write: true, Output: filepath.Join(dir, "no", "such", "out.jsonl")})
		if r := refusalOf(o, err); !refusedUnsafe(r) {
			t.Fatalf("refusal %v (%v), want one (exit 4)", r, err)
		}
		if names := filetest.List(t, dir); !cmp.Equal(names, []string{"rollout.jsonl"}) {
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
	if o, _, err := writeInPlace(path, nil); err != nil || exitOf(o) != 0 {
		t.Fatalf("repair: %v, exit %d", err, exitOf(o))
	}
	second := good + "garbage two\n"
	os.WriteFile(path, []byte(second), 0o600)
	if o, _, err := writeInPlace(path, nil); err != nil || exitOf(o) != 0 {
		t.Fatalf("repair: %v, exit %d", err, exitOf(o))
	}
	if got := string(filetest.Read(t, path)); got != good {
		t.Errorf("file = %q", got)
	}
	for name, want := range map[string]string{".bak": "an older backup", ".bak.1": first, ".bak.2": second} {
		if got := string(filetest.Read(t, path+name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	wantQ := fmt.Sprintf(`{"line":2,"byte_offset":%d,"reason":"line/invalid-json","raw":"garbage one","eol":"\n"}`+"\n"+
		`{"line":2,"byte_offset":%[1]d,"reason":"line/invalid-json","raw":"garbage two","eol":"\n"}`+"\n", len(good))
	if got := string(filetest.Read(t, path+".quarantine.jsonl")); got != wantQ {
		t.Errorf("quarantine:\n%s\nwant:\n%s", got, wantQ)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the original's 0600", fi.Mode().Perm())
	}
	// NoBackup (--no-backup): no FILE.bak.3.
	os.WriteFile(path, []byte(second), 0o600)
	if o, _, err := repairWrite(repair.Options{Path: path, Write: true, NoBackup: true}); err != nil || exitOf(o) != 0 {
		t.Fatalf("NoBackup: %v, exit %d", err, exitOf(o))
	}
	if _, err := os.Stat(path + ".bak.3"); err == nil {
		t.Errorf("NoBackup made a backup")
	}
	if got := string(filetest.Read(t, path)); got != good {
		t.Errorf("file = %q", got)
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
				data = filetest.Zstd(t, data)
			}
			os.WriteFile(in, data, 0o644)
			if o, plan, err := repairWrite(repair.Options{Path: in, Output: out, Write: true}); err != nil || exitOf(o) != 0 {
				t.Fatalf("repair: %v, exit %d\n%s", err, exitOf(o), plan)
			}
			got := filetest.Read(t, out)
			if strings.HasSuffix(out, ".zst") {
				got = filetest.Unzstd(t, out)
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
	fixes, err := checks.SelectFixes([]string{"default", "item/rejected-id"})
	if err != nil {
		t.Fatal(err)
	}
	o, stdout, err := repairWrite(repair.Options{Path: path, Write: true, Fix: fixes})
	if err != nil || exitOf(o) != 0 {
		t.Fatalf("repair: %v, exit %d\n%s", err, exitOf(o), stdout)
	}
	if !strings.Contains(stdout, `line 3  item/rejected-id  not fixed: the object has 2 "id" members`) {
		t.Errorf("the skipped fix is not reported:\n%s", stdout)
	}
	fi, _ := os.Stat(path)
	if string(filetest.Read(t, path)) != in || !fi.ModTime().Equal(old) {
		t.Errorf("the file was rewritten")
	}
	if names := filetest.List(t, dir); !cmp.Equal(names, []string{"rollout.jsonl"}) {
		t.Errorf("files left behind: %v", names)
	}
}
