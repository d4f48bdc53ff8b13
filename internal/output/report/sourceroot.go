package report

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// DefaultSourceRoot is the source root when none is given: the git work
// tree holding the working directory (code scanning names files relative
// to it), else the working directory. GIT_CEILING_DIRECTORIES bounds the
// search as it bounds git's.
func DefaultSourceRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return WorkTreeOf(wd, filepath.SplitList(os.Getenv("GIT_CEILING_DIRECTORIES"))), nil
}

// WorkTreeOf is the top of the git work tree holding dir (an absolute
// directory), or dir when there is none. A directory counts only when its
// .git is a real repository or a worktree's link: an empty .git left in
// /tmp by some program, which `git rev-parse` rejects too, would otherwise
// shift every SARIF and Code Quality path. As git does, the search does not
// go up into a ceiling (a directory of ceilings that is above dir).
func WorkTreeOf(dir string, ceilings []string) string {
	floor := ""
	for _, c := range ceilings {
		c = filepath.Clean(c)
		if filepath.IsAbs(c) && len(c) > len(floor) && isBelow(dir, c) {
			floor = c
		}
	}
	for d := dir; floor == "" || isBelow(d, floor); d = filepath.Dir(d) {
		if isWorkTreeTop(d) {
			return d
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return dir
}

// isBelow reports whether dir lies strictly inside ancestor.
func isBelow(dir, ancestor string) bool {
	rel, err := filepath.Rel(ancestor, dir)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// isWorkTreeTop reports whether dir/.git is a git directory (one with a
// HEAD file) or a linked worktree's or submodule's .git file ("gitdir: ").
func isWorkTreeTop(dir string) bool {
	git := filepath.Join(dir, ".git")
	fi, err := os.Lstat(git)
	switch {
	case err != nil:
		return false
	case fi.IsDir():
		head, err := os.Stat(filepath.Join(git, "HEAD"))
		return err == nil && head.Mode().IsRegular()
	case fi.Mode().IsRegular():
		f, err := os.Open(git)
		if err != nil {
			return false
		}
		defer f.Close()
		prefix := make([]byte, len("gitdir:"))
		_, err = io.ReadFull(f, prefix)
		return err == nil && bytes.Equal(prefix, []byte("gitdir:"))
	}
	return false
}
