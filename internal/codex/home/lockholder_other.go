//go:build !linux

package home

import "os"

// lockHolder: only Linux lists the holders of flocks (/proc/locks).
func lockHolder(*os.File) int { return 0 }
