//go:build !unix

package inplace

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

// lock: no advisory locks here; two repairs of one file are not kept apart
// (see docs/repair.md).
func lock(*os.File) error { return nil }

func Links(os.FileInfo) uint64 { return 1 }

func Owner(os.FileInfo) (uid, gid int) { return -1, -1 }

// Replaceable: the rename itself tells (see lock_unix.go).
func Replaceable(string, os.FileInfo) error { return nil }
