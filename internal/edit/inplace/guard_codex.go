package inplace

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/rollout"
)

// codexLocks is what the guard holds and checks of the Codex home a
// rollout lies in: the home's maintenance lock, held for the whole
// transaction so that Codex's compression and migration (which publish by
// renaming a replacement over a rollout) skip their run meanwhile, and the
// thread whose writer lock must be free.
type codexLocks struct {
	home   *home.Home
	thread string
	maint  *home.MaintenanceLock
}

// lockCodex takes the maintenance lock of the rollout's home and checks
// the thread's writer lock. A rollout outside a Codex home, or a system
// without flock, has neither: nil, nil.
func lockCodex(path string) (*codexLocks, *Refusal) {
	h, ok := home.Of(path)
	if !ok || !home.Locks {
		return nil, nil
	}
	c := &codexLocks{home: h, thread: threadOf(path)}
	if r := c.checkWriter(path); r != nil {
		return nil, r // before the maintenance lock file is created
	}
	m, err := h.AcquireMaintenance()
	switch {
	case errors.Is(err, home.ErrMaintenanceBusy):
		return nil, Refuse(Busy, path, "Codex's rollout compression or migration is running in %s (it holds %s): it publishes by renaming a file over a rollout",
			h.Dir, filepath.Join(h.Dir, home.MaintenanceLockPath))
	case err != nil:
		return nil, &Refusal{Kind: WriteFailed, Path: path, Err: fmt.Errorf("taking Codex's maintenance lock: %w", err)}
	}
	c.maint = m
	return c, nil
}

// checkWriter refuses (CodexWriter, naming the holder's pid) while a
// Codex process holds the thread's writer lock: an idle app-server or TUI
// holds it without keeping the rollout open, so /proc cannot see it.
func (c *codexLocks) checkWriter(path string) *Refusal {
	if c == nil || c.thread == "" {
		return nil
	}
	wl, err := c.home.ProbeWriterLock(c.thread)
	if err != nil {
		return &Refusal{Kind: WriteFailed, Path: path, Err: fmt.Errorf("probing Codex's writer lock: %w", err)}
	}
	if !wl.Held {
		return nil
	}
	who := "a process"
	if wl.PID > 0 {
		who = fmt.Sprintf("PID %d", wl.PID)
		if !wl.Alive {
			who += " (not running here: another process holds the lock)"
		}
	}
	r := Refuse(CodexWriter, path, "thread %s has an active Codex writer, %s: it holds %s, and replacing the rollout would lose what it writes next",
		c.thread, who, wl.Path)
	r.Holders = []Holder{{PID: wl.PID, Command: "codex (thread writer lock)"}}
	return r
}

// CheckCodexWriter refuses (CodexWriter, naming the holder's pid) while
// Codex holds the writer lock of path's thread; nil outside a Codex home
// or without flock. A command that checks a file's content before it
// takes the guard (reclaim --undo) calls it first: while Codex writes the
// thread, that is what it must report, not that the file changed.
func CheckCodexWriter(path string) *Refusal {
	h, ok := home.Of(path)
	if !ok || !home.Locks {
		return nil
	}
	c := &codexLocks{home: h, thread: threadOf(path)}
	return c.checkWriter(path)
}

func (c *codexLocks) release() {
	if c != nil {
		c.maint.Release()
		c.maint = nil
	}
}

// threadOf is the thread of a rollout: its session_meta id, else the id in
// its name.
func threadOf(path string) string {
	if m := rollout.FindThreads([]string{path}, ""); len(m) == 1 && m[0].ThreadID != "" {
		return strings.ToLower(m[0].ThreadID)
	}
	id, _ := rollout.ThreadIDFromName(path)
	return id
}
