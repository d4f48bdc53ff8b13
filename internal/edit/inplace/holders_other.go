//go:build !linux

package inplace

import "os"

// writersOf cannot tell which processes hold a file open outside Linux:
// only the change checks protect a file an agent appends to (see
// docs/repair.md).
func writersOf(os.FileInfo) []Holder { return nil }
