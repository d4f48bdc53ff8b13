// Package homegen lays out the Codex homes of fixtures/home for tests: a
// base home's files as they are, its databases built from their SQL dumps
// in WAL mode, as Codex keeps them (fixtures/home/README.md). It is a
// fixture generator (internal/testkit): used only by tests and by demohome.
package homegen

import (
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	_ "modernc.org/sqlite"
)

// Base is the base home every home fixture starts from.
const Base = "codex-0.171.0"

// Thread and Rollout are the base home's thread and its rollout (relative
// to the home).
const (
	Thread  = "01a2334d-969a-7e00-8a86-b43f7987c86f"
	Rollout = "sessions/2026/12/01/rollout-2026-12-01T20-30-52-01a2334d-969a-7e00-8a86-b43f7987c86f.jsonl"
)

// Attached is a base home Codex 0.171.0 made with a side conversation:
// `codex exec` (one turn of AttachedParent), then app-server `thread/fork`
// with attachToSource, which made AttachedChild, a paginated fork whose
// threads row names AttachedParent in attached_thread_parent_id.
const (
	Attached       = "codex-0.171.0-attached"
	AttachedParent = "01a23661-7f82-7f43-a659-85d5ccddb1b0"
	AttachedChild  = "01a23661-8dec-7481-83e1-4266d20832e7"
)

// Reverted is a base home Codex 0.171.0 made with thread/revert:
// `codex exec` and `codex exec resume` (two turns of RevertedThread in
// RevertedOriginal), app-server thread/revert before the second turn,
// which wrote RevertedCurrent (rollout id RevertedRollout, its
// session_meta.history_base the first 20 records of RevertedOriginal) and
// pointed the threads row at it, then `codex exec resume` (one turn,
// appended to RevertedCurrent). The history database keeps a projection
// of each file, under its rollout id.
const (
	Reverted         = "codex-0.171.0-reverted"
	RevertedThread   = "01a236b1-9503-7343-b380-1ebb76e25a9d"
	RevertedRollout  = "01a236b1-cc86-7193-aa8a-26f9bd51fdfa"
	RevertedOriginal = "sessions/2026/12/02/rollout-2026-12-02T12-18-57-01a236b1-9503-7343-b380-1ebb76e25a9d.jsonl"
	RevertedCurrent  = "sessions/2026/12/02/rollout-2026-12-02T12-19-11-01a236b1-9503-7343-b380-1ebb76e25a9d_01a236b1-cc86-7193-aa8a-26f9bd51fdfa.jsonl"
)

// Dir is fixtures/home of this checkout.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "fixtures", "home")
}

// Build lays out the base home base in dir (created), @HOME@ in the
// dumps replaced by dir.
func Build(dir, base string) error {
	src := filepath.Join(Dir(), "base", base)
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if db, ok := strings.CutSuffix(rel, ".sql"); ok && !strings.ContainsRune(rel, filepath.Separator) {
			return Exec(filepath.Join(dir, db+".sqlite"), strings.ReplaceAll(string(b), "@HOME@", dir))
		}
		return write(filepath.Join(dir, rel), b)
	})
	if err != nil {
		return err
	}
	for _, d := range []string{"thread-writer-locks", ".tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	return write(filepath.Join(dir, "thread-writer-locks", ".coordination.lock"), nil)
}

func write(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Exec runs an SQL script on a database, creating it in WAL mode.
func Exec(path, script string) error {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(wal)")
	q.Add("_pragma", "busy_timeout(2000)")
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}).String())
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(script); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}
