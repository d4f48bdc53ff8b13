//go:build !unix

package main

import "github.com/rogpeppe/go-internal/testscript"

func cmdMkfifo(ts *testscript.TestScript, _ bool, _ []string) {
	ts.Skip("mkfifo: no named pipes on this system")
}
