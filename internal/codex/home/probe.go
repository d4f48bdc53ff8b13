package home

import (
	"fmt"
	"os"
	"path/filepath"
)

// NotAHome says why Dir is not a Codex home, or returns nil when it is
// one: a directory that holds sessions/, archived_sessions/ or a
// state_N.sqlite. Checking another directory would report nothing and
// look like a clean home.
func (h *Home) NotAHome() error {
	if fi, err := os.Stat(h.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", h.Dir)
	}
	for _, sub := range []string{SessionsDir, ArchivedSessionsDir} {
		if fi, err := os.Stat(filepath.Join(h.Dir, sub)); err == nil && fi.IsDir() {
			return nil
		}
	}
	if h.StateDB() != "" {
		return nil
	}
	return fmt.Errorf("%s is not a Codex home: it has no %s/, no %s/ and no state_N.sqlite", h.Dir, SessionsDir, ArchivedSessionsDir)
}
