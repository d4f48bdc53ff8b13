// Package buildinfo says what the Go toolchain stamped into the binary:
// the module version and the VCS commit it was built from. It sits below
// every stage (internal/base): the version command and every JSON header
// read it, and the build info is parsed once a process.
package buildinfo

import (
	"runtime/debug"
	"sync"
)

var read = sync.OnceValues(debug.ReadBuildInfo)

// Version is the module version: the tag `go install` built, or 0.1.0 for
// a build from a checkout.
func Version() string {
	if bi, ok := read(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0"
}

// Commit is the VCS stamp: the commit ("+dirty" when the tree had local
// changes) and its time, each a phrase ("commit 97581327b78e",
// "committed 2026-11-30T14:12:53Z"); none without a stamp.
func Commit() []string {
	if bi, ok := read(); ok {
		return commit(bi.Settings)
	}
	return nil
}

func commit(settings []debug.BuildSetting) []string {
	s := map[string]string{}
	for _, kv := range settings {
		s[kv.Key] = kv.Value
	}
	var parts []string
	if rev := s["vcs.revision"]; rev != "" {
		c := "commit " + rev[:min(len(rev), 12)]
		if s["vcs.modified"] == "true" {
			c += "+dirty"
		}
		parts = append(parts, c)
	}
	if t := s["vcs.time"]; t != "" {
		parts = append(parts, "committed "+t)
	}
	return parts
}
