package homegen

import (
	"fmt"
	"os"
	"path/filepath"
)

// Demo lays out, in the new directory dir, the home of the README's tour
// of `rollout home` (go run ./internal/testkit/fixturegen/homegen/demohome
// DIR): the Base home with the thread's row deleted and a writer-lock
// file left by a process that is gone.
func Demo(dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("%s exists: give a new directory", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := Build(abs, Base); err != nil {
		return err
	}
	if err := Exec(filepath.Join(abs, "state_5.sqlite"), "DELETE FROM threads"); err != nil {
		return err
	}
	// A pid no process has (above Linux's pid_max).
	lock := filepath.Join(abs, "thread-writer-locks", Thread+".lock")
	return os.WriteFile(lock, []byte("pid=2147483646\n"), 0o644)
}
