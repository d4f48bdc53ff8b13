package home

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// WriterLock is what the writer lock of a thread says: Codex holds an
// advisory lock on thread-writer-locks/<thread>.lock while a process
// writes the thread, and writes "pid=N" into it.
type WriterLock struct {
	Path     string
	ThreadID string
	Exists   bool
	Held     bool // some process holds the lock now
	// PID is the holder (from /proc/locks on Linux) or the pid the file
	// names; 0 when neither says.
	PID   int
	Alive bool // PID is a running process
}

// ErrNoLocks: file locks are not available on this system, so Codex's
// writer locks cannot be seen.
var ErrNoLocks = errors.New("advisory file locks are not available on this system")

// WriterLockPath is where Codex keeps the writer lock of a thread.
func (h *Home) WriterLockPath(threadID string) string {
	return filepath.Join(h.Dir, WriterLocksDir, threadID+".lock")
}

// ProbeWriterLock says whether the thread's writer lock is held, without
// waiting and without creating the file. The probe runs under Codex's
// coordination lock, which Codex takes around acquiring, releasing and
// clearing stale writer locks, so that the instant the probe holds the
// lock can never make a Codex acquire fail.
func (h *Home) ProbeWriterLock(threadID string) (WriterLock, error) {
	wl := WriterLock{Path: h.WriterLockPath(threadID), ThreadID: threadID}
	release := h.coordinate()
	defer release()
	f, err := openRegular(wl.Path)
	if errors.Is(err, os.ErrNotExist) {
		return wl, nil
	}
	if err != nil {
		return wl, err
	}
	defer f.Close()
	wl.Exists = true
	held, err := probe(f)
	if err != nil {
		return wl, fmt.Errorf("probing %s: %w", wl.Path, err)
	}
	wl.Held = held
	wl.PID = readPID(wl.Path)
	if held {
		if pid := lockHolder(f); pid > 0 {
			wl.PID = pid // the holder itself, whatever the file says
		}
	}
	wl.Alive = wl.PID > 0 && alive(wl.PID)
	return wl, nil
}

// WriterLocks probes every writer lock file of the home, by thread id.
func (h *Home) WriterLocks() ([]WriterLock, error) {
	entries, err := os.ReadDir(filepath.Join(h.Dir, WriterLocksDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []WriterLock
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".lock")
		if !ok || !e.Type().IsRegular() || !isUUID(id) {
			continue // the coordination lock, anything not Codex's
		}
		wl, err := h.ProbeWriterLock(id)
		if err != nil {
			return out, err
		}
		if wl.Exists {
			out = append(out, wl)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ThreadID < out[j].ThreadID })
	return out, nil
}

// coordinate takes Codex's coordination lock if it exists, waiting a
// little at most (Codex holds it for microseconds), and returns its
// release. Without it the probe still runs.
func (h *Home) coordinate() func() {
	f, err := openRegular(filepath.Join(h.Dir, WriterLocksDir, coordinationLock))
	if err != nil {
		return func() {}
	}
	if !lockShortly(f) {
		f.Close()
		return func() {}
	}
	return func() { f.Close() }
}

// readPID reads "pid=N" from a lock file (at most a few bytes are read).
func readPID(path string) int {
	f, err := openRegular(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	for line := range strings.SplitSeq(string(buf[:n]), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "pid="); ok {
			if pid, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && pid > 0 {
				return pid
			}
		}
	}
	return 0
}

// isUUID reports whether s has the shape of a thread id.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}

// MaintenanceLock is Codex's home-wide lock for the jobs that publish a
// rollout by renaming a replacement over it (compression, migration):
// while rollout holds it, those jobs skip their run.
type MaintenanceLock struct {
	key  string
	done bool
}

// ErrMaintenanceBusy: Codex's compression or migration is running.
var ErrMaintenanceBusy = errors.New("the rollout compression or migration of Codex is running (it holds .tmp/rollout-maintenance.lock)")

// heldMaintenance are the maintenance locks this process holds, by home:
// a flock conflicts with another open of the same file even in one
// process, so every guard of one run (a reclaim of a thread tree locks
// each file) shares one descriptor.
var heldMaintenance = struct {
	sync.Mutex
	m map[string]*maintenanceFile
}{m: map[string]*maintenanceFile{}}

type maintenanceFile struct {
	f    *os.File
	refs int
}

// AcquireMaintenance takes the maintenance lock without waiting, creating
// .tmp/rollout-maintenance.lock as Codex does when it is absent.
func (h *Home) AcquireMaintenance() (*MaintenanceLock, error) {
	path := filepath.Join(h.Dir, MaintenanceLockPath)
	key := resolve(path)
	heldMaintenance.Lock()
	defer heldMaintenance.Unlock()
	if mf := heldMaintenance.m[key]; mf != nil {
		mf.refs++
		return &MaintenanceLock{key: key}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := openRegularFlags(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if !held {
		f.Close()
		return nil, ErrMaintenanceBusy
	}
	heldMaintenance.m[key] = &maintenanceFile{f: f, refs: 1}
	return &MaintenanceLock{key: key}, nil
}

// Release drops the maintenance lock (the last release of the process
// closes it).
func (m *MaintenanceLock) Release() {
	if m == nil || m.done {
		return
	}
	m.done = true
	heldMaintenance.Lock()
	defer heldMaintenance.Unlock()
	if mf := heldMaintenance.m[m.key]; mf != nil {
		if mf.refs--; mf.refs == 0 {
			mf.f.Close()
			delete(heldMaintenance.m, m.key)
		}
	}
}
