package home

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockHolder finds the process holding a flock on the file f names, from
// /proc/locks ("1: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF"): Codex
// 0.171.0 holds the writer lock of a thread with a lock file that names
// no pid (measured), so the file alone cannot say who writes. 0: unknown.
func lockHolder(f *os.File) int {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer locks.Close()
	self := os.Getpid()
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] != "FLOCK" {
			continue
		}
		pid, err := strconv.Atoi(fs[4])
		if err != nil || pid == self {
			continue
		}
		id := strings.Split(fs[5], ":")
		if len(id) != 3 {
			continue
		}
		ino, err := strconv.ParseUint(id[2], 10, 64)
		if err != nil || ino != uint64(st.Ino) {
			continue
		}
		maj, err1 := strconv.ParseUint(id[0], 16, 32)
		min, err2 := strconv.ParseUint(id[1], 16, 32)
		if err1 != nil || err2 != nil || uint64(st.Dev) != mkdev(maj, min) {
			continue
		}
		return pid
	}
	return 0
}

// mkdev is Linux's encoding of a device number (glibc's gnu_dev_makedev).
func mkdev(major, minor uint64) uint64 {
	return (minor & 0xff) | ((major & 0xfff) << 8) | ((minor &^ 0xff) << 12) | ((major &^ 0xfff) << 32)
}
