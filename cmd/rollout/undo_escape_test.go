package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// treeOf maps every file under root (relative path) to its content: what a
// refused command must leave exactly as it was.
func treeOf(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "symlink to " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

const escapeRollout = `{"timestamp":"2026-03-10T09:35:30.000Z","type":"session_meta","payload":{"id":"019cd719-fabd-7808-8020-00009e3779b2","cli_version":"0.110.0"}}
{"timestamp":"2026-03-10T09:35:31.000Z","type":"response_item","payload":{"type":"message","id":"msg_019cd719-fb00-7000-8000-000000000001","role":"user","content":[{"type":"input_text","text":"hi"}]}}
`

// escapeSetup lays out root/victim (outside the rollout's directory) and the
// rollout, in a plain directory or in a Codex home's sessions tree.
func escapeSetup(t *testing.T, inHome bool) (root, dir, path string) {
	t.Helper()
	root = t.TempDir()
	dir = filepath.Join(root, "case")
	if inHome {
		dir = filepath.Join(root, "home", "sessions", "2026", "03", "10")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "rollout-2026-03-10T09-35-30-019cd719-fabd-7808-8020-00009e3779b2.jsonl")
	os.WriteFile(path, []byte(escapeRollout), 0o644)
	os.WriteFile(filepath.Join(root, "victim"), []byte("the victim's only copy\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "other.jsonl"), []byte("another file of the directory\n"), 0o644)
	return root, dir, path
}

// TestRepairUndoNeverEscapes: a FILE.repair-undo.json written by anyone who
// can write the sessions directory names files outside FILE's own
// artifacts. Undo refuses it (exit 4) and touches nothing: not the victim,
// not FILE, not the record.
func TestRepairUndoNeverEscapes(t *testing.T) {
	sum := sha256Hex([]byte(escapeRollout))
	victim := "the victim's only copy\n"
	for _, inHome := range []bool{false, true} {
		for name, rec := range map[string]func(root, path string) string{
			"backup-parent": func(root, path string) string {
				return fmt.Sprintf(`{"version":1,"file":%q,"size":%d,"sha256":%q,"backup":"../victim"}`, filepath.Base(path), len(escapeRollout), sum)
			},
			"backup-absolute": func(root, path string) string {
				return fmt.Sprintf(`{"version":1,"file":%q,"size":%d,"sha256":%q,"backup":%q}`, filepath.Base(path), len(escapeRollout), sum, filepath.Join(root, "victim"))
			},
			"backup-sibling": func(root, path string) string {
				return fmt.Sprintf(`{"version":1,"file":%q,"size":%d,"sha256":%q,"backup":"other.jsonl"}`, filepath.Base(path), len(escapeRollout), sum)
			},
			"quarantine-deleted": func(root, path string) string {
				os.WriteFile(path+".bak", []byte(escapeRollout), 0o644)
				return fmt.Sprintf(`{"version":1,"file":%q,"size":%d,"sha256":%q,"backup":%q,"quarantine":"../victim","quarantine_before":{"existed":false,"size":0,"sha256":""},"quarantine_after_size":%d}`,
					filepath.Base(path), len(escapeRollout), sum, filepath.Base(path)+".bak", len(victim))
			},
			"quarantine-truncated": func(root, path string) string {
				os.WriteFile(path+".bak", []byte(escapeRollout), 0o644)
				return fmt.Sprintf(`{"version":1,"file":%q,"size":%d,"sha256":%q,"backup":%q,"quarantine":"../victim","quarantine_before":{"existed":true,"size":0,"sha256":%q},"quarantine_after_size":%d}`,
					filepath.Base(path), len(escapeRollout), sum, filepath.Base(path)+".bak", sha256Hex(nil), len(victim))
			},
		} {
			t.Run(fmt.Sprintf("%s/home=%v", name, inHome), func(t *testing.T) {
				root, _, path := escapeSetup(t, inHome)
				os.WriteFile(path+".repair-undo.json", []byte(rec(root, path)), 0o600)
				before := treeOf(t, root)
				code, stdout, stderr := runRollout("repair", "--undo", path)
				if code != exitUnsafe {
					t.Errorf("exit %d, want %d\n%s%s", code, exitUnsafe, stdout, stderr)
				}
				if diff := cmp.Diff(before, treeOf(t, root)); diff != "" {
					t.Errorf("a refused undo changed files (-before +after):\n%s", diff)
				}
			})
		}
	}
}

// TestReclaimUndoNeverEscapes: the archive's last line names the original
// and the result; a crafted one names files elsewhere. Undo derives both
// names from FILE, refuses the archive (exit 4) and touches nothing.
func TestReclaimUndoNeverEscapes(t *testing.T) {
	sum := sha256Hex([]byte(escapeRollout))
	for _, inHome := range []bool{false, true} {
		for name, trailer := range map[string]func(root, path string) string{
			"path-parent": func(root, path string) string {
				return fmt.Sprintf(`{"reclaimed":1,"path":"../outside","result":%q,"policies":["duplicate-exec-output"],"original_sha256":%q,"result_sha256":%q,"result_compressed":false,"cuts":0}`, filepath.Base(path), sum, sum)
			},
			"path-absolute": func(root, path string) string {
				return fmt.Sprintf(`{"reclaimed":1,"path":%q,"result":%q,"policies":["duplicate-exec-output"],"original_sha256":%q,"result_sha256":%q,"result_compressed":false,"cuts":0}`, filepath.Join(root, "outside"), filepath.Base(path), sum, sum)
			},
			"result-victim": func(root, path string) string {
				v := sha256Hex([]byte("the victim's only copy\n"))
				return fmt.Sprintf(`{"reclaimed":1,"path":%q,"result":"../../victim","policies":["duplicate-exec-output"],"original_sha256":%q,"result_sha256":%q,"result_compressed":false,"cuts":0}`, filepath.Base(path), v, v)
			},
			"path-sibling": func(root, path string) string {
				return fmt.Sprintf(`{"reclaimed":1,"path":"other.jsonl","result":%q,"policies":["duplicate-exec-output"],"original_sha256":%q,"result_sha256":%q,"result_compressed":false,"cuts":0}`, filepath.Base(path), sum, sum)
			},
		} {
			t.Run(fmt.Sprintf("%s/home=%v", name, inHome), func(t *testing.T) {
				root, _, path := escapeSetup(t, inHome)
				os.WriteFile(path+".reclaimed.jsonl.zst", zstdBytes(t, []byte(trailer(root, path)+"\n")), 0o600)
				before := treeOf(t, root)
				code, stdout, stderr := runRollout("reclaim", "--undo", path)
				if code != exitUnsafe {
					t.Errorf("exit %d, want %d\n%s%s", code, exitUnsafe, stdout, stderr)
				}
				if diff := cmp.Diff(before, treeOf(t, root)); diff != "" {
					t.Errorf("a refused undo changed files (-before +after):\n%s", diff)
				}
				if !strings.Contains(stderr, "rollout: error:") || bytes.Contains([]byte(stdout), []byte("restored")) {
					t.Errorf("not refused:\n%s%s", stdout, stderr)
				}
			})
		}
	}
}
