package main

import (
	"testing"

	"github.com/rollout-dev/rollout/internal/testkit/filetest"
)

// runRollout runs the CLI in-process.
func runRollout(args ...string) (code int, stdout, stderr string) {
	io, out, errb := testIO("")
	code = run(args, io)
	return code, out.String(), errb.String()
}

// The file helpers the tests of this package share with the library's.

func readFile(t *testing.T, p string) []byte             { return filetest.Read(t, p) }
func listDir(t *testing.T, dir string) []string          { return filetest.List(t, dir) }
func appendTo(t *testing.T, path string, b []byte)       { filetest.Append(t, path, b) }
func zstdBytes(t *testing.T, b []byte) []byte            { return filetest.Zstd(t, b) }
func treeOf(t *testing.T, root string) map[string]string { return filetest.Tree(t, root) }
func codexHomeWithTear(t *testing.T) (root, path string) { return filetest.CodexHomeWithTear(t) }
func brokenRollout(t *testing.T, size int64) []byte      { return filetest.BrokenRollout(t, size) }
