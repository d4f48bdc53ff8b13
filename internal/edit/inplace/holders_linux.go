package inplace

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// writersOf lists the other processes that hold the file fi open for
// writing, from /proc/*/fd and the flags in /proc/*/fdinfo. Processes of
// other users are visible to root only: for others the list may miss them
// (see docs/repair.md).
func writersOf(fi os.FileInfo) []Holder {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []Holder
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", p.Name())
		fds, err := os.ReadDir(filepath.Join(dir, "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link := filepath.Join(dir, "fd", fd.Name())
			target, err := os.Readlink(link)
			if err != nil || !strings.HasPrefix(target, "/") {
				continue // sockets, pipes, anonymous inodes
			}
			st, err := os.Stat(link)
			if err != nil || !os.SameFile(st, fi) || !openForWriting(filepath.Join(dir, "fdinfo", fd.Name())) {
				continue
			}
			comm, _ := os.ReadFile(filepath.Join(dir, "comm"))
			out = append(out, Holder{PID: pid, Command: string(bytes.TrimSpace(comm))})
			break
		}
	}
	return out
}

// openForWriting reads the octal "flags:" of an fdinfo file: O_WRONLY or
// O_RDWR in the access mode bits.
func openForWriting(fdinfo string) bool {
	b, err := os.ReadFile(fdinfo)
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&3 != 0
		}
	}
	return false
}
