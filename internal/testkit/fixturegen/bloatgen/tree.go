package bloatgen

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteTree writes the default tree as a sessions directory: dir, new,
// is what Write puts under sessions/ (go run
// ./internal/testkit/fixturegen/bloatgen/demotree DIR, the README's tour
// of space and reclaim).
func WriteTree(dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("%s exists: give a new directory", dir)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".demotree-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if _, err := Write(tmp, Options{}); err != nil {
		return err
	}
	return os.Rename(filepath.Join(tmp, "sessions"), dir)
}
