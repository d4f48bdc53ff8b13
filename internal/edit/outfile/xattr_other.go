//go:build !linux

package outfile

import "os"

// copyXattrs: extended attributes are copied on Linux only.
func copyXattrs(string, *os.File) {}
