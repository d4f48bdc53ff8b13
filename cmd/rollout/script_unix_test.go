//go:build unix

package main

import (
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdMkfifo: mkfifo PATH makes a named pipe.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkfifo path")
	}
	ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o600))
}
