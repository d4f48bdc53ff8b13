//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/testkit/conformance"
)

// TestLiveWritesRefuseCodexMidTurn: while a real Codex is in the middle of
// a turn (the mock holds its model response open), Codex holds the
// thread's writer lock; repair --write, reclaim --write and both undos
// then exit 4 naming Codex's own pid, and the rollout and every file of
// Codex's databases stay byte-identical. Released, Codex finishes its turn
// and appends to the same file; then the same repair and reclaim go
// through, so their refusals were the lock's.
func TestLiveWritesRefuseCodexMidTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Codex CLI")
	}
	for _, v := range []string{"0.171.0", "0.169.0"} {
		t.Run(v, func(t *testing.T) { writesRefuseMidTurn(t, installedCodex(t, v)) })
	}
}

func writesRefuseMidTurn(t *testing.T, c *conformance.Codex) {
	m := conformance.NewMock()
	defer m.Close()
	h, err := conformance.NewHome(t.TempDir(), c, m)
	if err != nil {
		t.Fatal(err)
	}
	rel, id := reclaimableSession(t, h)
	path := filepath.Join(h.Dir, rel)
	// An undo record (a repaired torn record), and a torn record again
	// for repair --write to fix.
	insertTornRecord(t, path)
	if code, o, e := runRollout("repair", "--write", path); code != exitOK {
		t.Fatalf("repair --write: exit %d\n%s%s", code, o, e)
	}
	insertTornRecord(t, path)

	midTurn(t, h, id, rel,
		[]string{"repair", "--write", path},
		[]string{"repair", "--write", "--force", path},
		[]string{"reclaim", "--policy", reclaimPolicies, "--write", path},
		[]string{"reclaim", "--policy", "compress", "--cold-after", "0s", "--write", path},
		[]string{"repair", "--undo", path})

	// Codex is done: the same writes go through (a new undo record and a
	// reclaim archive), and their undos are refused while Codex is
	// mid-turn again.
	if code, o, e := runRollout("repair", "--write", path); code != exitOK || !strings.Contains(o, "wrote") {
		t.Fatalf("repair --write once Codex finished: exit %d\n%s%s", code, o, e)
	}
	if code, o, e := runRollout("reclaim", "--policy", reclaimPolicies, "--write", path); code != exitOK || !strings.Contains(o, "1 files written") {
		t.Fatalf("reclaim --write once Codex finished: exit %d\n%s%s", code, o, e)
	}
	midTurn(t, h, id, rel,
		[]string{"reclaim", "--undo", path},
		[]string{"repair", "--undo", path})
}

// midTurn resumes thread id with a turn whose model response the mock
// holds open, runs each command while Codex waits in it, and checks that
// each exits 4 naming Codex's pid with the rollout and the databases
// byte-identical; then it releases the response and checks that Codex
// finished its turn in the same rollout.
func midTurn(t *testing.T, h *conformance.Home, id, rel string, cmds ...[]string) {
	t.Helper()
	s, err := h.Start(context.Background(), h.ExecArgs([]string{"resume", id}, conformance.Marker+" hold,msg")...)
	if err != nil {
		t.Fatal(err)
	}
	released := false
	defer func() {
		if !released {
			h.Mock.Release()
			s.Wait()
		}
	}()
	select {
	case <-h.Mock.Held():
	case <-time.After(90 * time.Second):
		t.Fatal("Codex sent no model request within 90 s")
	}
	pid := codexChild(s.PID())
	if pid == 0 {
		t.Fatalf("no codex process below the launcher %d", s.PID())
	}
	before := quietState(t, h.Dir, rel)
	for _, args := range cmds {
		code, o, e := runRollout(args...)
		if out := o + e; code != exitUnsafe || !strings.Contains(out, fmt.Sprintf("PID %d", pid)) || !strings.Contains(out, "active Codex writer") {
			t.Errorf("%v while Codex %s (pid %d) is mid-turn: exit %d, want %d naming its pid\n%s%s", args[:len(args)-1], h.Codex.Version, pid, code, exitUnsafe, o, e)
		}
		if d := cmp.Diff(before, codexState(t, h.Dir, rel)); d != "" {
			t.Errorf("%v while Codex is mid-turn changed the rollout or the databases (-before +after):\n%s", args[:len(args)-1], d)
		}
	}
	t.Logf("Codex %s mid-turn (pid %d holding %s): %d writes refused, %d files unchanged", h.Codex.Version, pid, filepath.Join("thread-writer-locks", id+".lock"), len(cmds), len(before))

	h.Mock.Release()
	released = true
	run, err := s.Wait()
	if err != nil || run.ExitCode != 0 {
		t.Fatalf("Codex after the release: %v, exit %d\n%s", err, run.ExitCode, run.Stderr)
	}
	appended := false
	for _, ch := range run.Changes {
		switch {
		case ch.Path == rel && ch.What == "appended":
			appended = true
		case strings.HasSuffix(ch.Path, ".jsonl") && ch.Path != rel:
			t.Errorf("Codex wrote another rollout: %s %s", ch.What, ch.Path)
		}
	}
	if !appended {
		t.Errorf("Codex did not finish its turn in the rollout: %+v", run.Changes)
	}
}

// codexChild is the codex binary the npm launcher (pid) started: a child
// of it whose executable is named codex; 0 when there is none.
func codexChild(launcher int) int {
	es, _ := os.ReadDir("/proc")
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so after ')'.
		rest := stat[bytes.LastIndexByte(stat, ')')+1:]
		f := strings.Fields(string(rest))
		if len(f) < 2 || f[1] != strconv.Itoa(launcher) {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && filepath.Base(exe) == "codex" {
			return pid
		}
	}
	return 0
}

// codexState is the content of the rollout and of every file of Codex's
// SQLite databases (with their -wal and -shm files), by name.
func codexState(t *testing.T, dir, rel string) map[string]string {
	t.Helper()
	out := map[string]string{}
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	out[rel] = digest(b)
	dbs, _ := filepath.Glob(filepath.Join(dir, "*.sqlite*"))
	if len(dbs) == 0 {
		t.Fatal("Codex made no database")
	}
	for _, p := range dbs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = digest(b)
	}
	return out
}

func digest(b []byte) string {
	return fmt.Sprintf("%d bytes, sha256 %x", len(b), sha256.Sum256(b))
}

// quietState waits until Codex, mid-turn, has stopped writing the rollout
// and its databases (two reads a second apart agree) and returns that
// state.
func quietState(t *testing.T, dir, rel string) map[string]string {
	t.Helper()
	prev := codexState(t, dir, rel)
	for range 30 {
		time.Sleep(time.Second)
		now := codexState(t, dir, rel)
		if cmp.Equal(prev, now) {
			return now
		}
		prev = now
	}
	t.Fatal("Codex kept writing its files for 30 s while its model response was held")
	return nil
}
