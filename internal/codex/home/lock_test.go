//go:build unix

package home

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestMaintenanceLock(t *testing.T) {
	h := New(t.TempDir())
	a, err := h.AcquireMaintenance()
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.AcquireMaintenance() // a second guard of the same run
	if err != nil {
		t.Fatalf("a second acquire in the same process: %v", err)
	}
	other, err := os.Open(filepath.Join(h.Dir, MaintenanceLockPath))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		t.Fatal("Codex could take the maintenance lock while rollout holds it")
	}
	a.Release()
	if syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		t.Fatal("released while the second guard still holds it")
	}
	b.Release()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("still held after both releases: %v", err)
	}
	if _, err := h.AcquireMaintenance(); !errors.Is(err, ErrMaintenanceBusy) {
		t.Fatalf("acquire while Codex holds it: %v, want ErrMaintenanceBusy", err)
	}
}

func TestProbeWriterLock(t *testing.T) {
	h := New(t.TempDir())
	id := "01a2334d-969a-7e00-8a86-b43f7987c86f"
	if wl, err := h.ProbeWriterLock(id); err != nil || wl.Exists || wl.Held {
		t.Fatalf("no lock file: %+v %v", wl, err)
	}
	if _, err := os.Stat(h.WriterLockPath(id)); !os.IsNotExist(err) {
		t.Fatal("the probe created the lock file")
	}
	os.MkdirAll(filepath.Dir(h.WriterLockPath(id)), 0o755)
	os.WriteFile(h.WriterLockPath(id), []byte("pid=2147483646\n"), 0o644)
	wl, err := h.ProbeWriterLock(id)
	if err != nil || !wl.Exists || wl.Held || wl.PID != 2147483646 || wl.Alive {
		t.Fatalf("stale lock: %+v %v", wl, err)
	}
	f, _ := os.OpenFile(h.WriterLockPath(id), os.O_RDWR, 0)
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if wl, err := h.ProbeWriterLock(id); err != nil || !wl.Held {
		t.Fatalf("held lock not seen: %+v %v", wl, err)
	}
}
