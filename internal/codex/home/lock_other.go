//go:build !unix

package home

import "os"

// Locks: without flock, Codex's writer locks cannot be probed here.
const Locks = false

func tryLock(*os.File) (bool, error) { return false, ErrNoLocks }
func probe(*os.File) (bool, error)   { return false, ErrNoLocks }
func lockShortly(*os.File) bool      { return false }
func alive(int) bool                 { return false }
