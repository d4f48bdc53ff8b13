package artifacts_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/testkit/conformance"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// TestCodexNeverSeesArtifacts proves with the real Codex CLI that what
// rollout leaves behind a rollout in a Codex home is invisible to Codex's
// session search and listing: Codex 0.58 (which resumed FILE.repair-undo.json
// when it sat beside the rollout: "failed to parse conversation ID from
// rollout file") and the newest version the harness knows. A session is
// made, damaged and repaired in place (backup, quarantine and undo record),
// and a copy of the rollout is left under every other artifact name (view
// page, reclaim archive, late bytes); then Codex resumes the thread by id
// and by "--last" and must read and append to the rollout itself, and to
// nothing of ours. The same artifacts beside the rollout, where older
// rollout versions left them, are shown to break 0.58's resume: the test
// can fail (see contrast).
func TestCodexNeverSeesArtifacts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Codex CLI")
	}
	newest := conformance.Versions[len(conformance.Versions)-1]
	for _, v := range []string{"0.58.0", newest} {
		t.Run(v, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			c, ok := conformance.Installed(v)
			if !ok {
				var err error
				if c, err = conformance.Install(ctx, v); err != nil {
					t.Skipf("Codex %s cannot be installed here (npm): %v", v, err)
				}
			}
			m := conformance.NewMock()
			defer m.Close()
			h, err := conformance.NewHome(t.TempDir(), c, m)
			if err != nil {
				t.Fatal(err)
			}
			run, err := h.Exec(ctx, conformance.Marker+" msg")
			if err != nil || run.ExitCode != 0 {
				t.Fatalf("codex exec: %v\n%+v", err, run)
			}
			rel := h.Rollouts()
			if len(rel) != 1 {
				t.Fatalf("rollouts %v", rel)
			}
			path := filepath.Join(h.Dir, rel[0])
			id := conformance.SessionID(path)
			leaveArtifacts(t, path)

			if got := h.Rollouts(); len(got) != 1 || got[0] != rel[0] {
				t.Errorf("the sessions trees hold more than the rollout: %v", got)
			}
			for _, resume := range [][]string{{"resume", id}, {"resume", "--last"}} {
				run, err := h.Run(ctx, append(append(append([]string{"exec", "--skip-git-repo-check", "--sandbox", "danger-full-access"}, h.ProviderArgs()...), resume...), conformance.Marker+" msg")...)
				if err != nil {
					t.Fatal(err)
				}
				if resume[1] == "--last" && run.ExitCode != 0 && strings.Contains(run.Stderr, "--last") {
					t.Logf("codex %s has no exec resume --last: %s", v, firstLine(run.Stderr))
					continue
				}
				if run.ExitCode != 0 {
					t.Errorf("codex exec %v: exit %d\n%s", resume, run.ExitCode, run.Stderr)
				}
				appended := false
				for _, ch := range run.Changes {
					if strings.HasPrefix(ch.Path, artifacts.StoreDir+string(filepath.Separator)) {
						t.Errorf("codex exec %v changed %s (%s): it took an artifact for a session", resume, ch.Path, ch.What)
					}
					appended = appended || ch.Path == rel[0] && ch.What == "appended"
				}
				if !appended {
					t.Errorf("codex exec %v did not append to the rollout; changes: %+v", resume, run.Changes)
				}
			}

			if v != "0.58.0" {
				return
			}
			contrast(ctx, t, h, path, id)
		})
	}
}

// leaveArtifacts repairs a damaged copy of the rollout in place (backup,
// quarantine, undo record) and puts a copy of the rollout under every other
// artifact name: the worst case for a search that opens what it finds.
func leaveArtifacts(t *testing.T, path string) {
	t.Helper()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, append(append([]byte{}, orig...), "not a record\n"...), 0o644)
	tx, err := repair.Begin(repair.Options{Path: path, Write: true, MaxLineBytes: rollout.DefaultMaxLineBytes, HandoffCap: reconstruct.DefaultHandoffCap})
	if err != nil {
		t.Fatal(err)
	}
	out := tx.Finish()
	if !out.Wrote || out.Refusal != nil || out.Backup == "" {
		t.Fatalf("repair --write: %+v", out.Refusal)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
		t.Fatal("the repair did not give back the rollout Codex wrote")
	}
	place, _ := artifacts.For(path)
	for _, name := range []string{place.View(), place.Archive(), place.Late(0), place.Backup(1)} {
		if err := os.WriteFile(name, orig, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{place.Quarantine(), place.UndoRecord(), out.Backup} {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("the repair left no %s", filepath.Base(name))
		}
	}
}

// contrast shows that 0.58's session search sees what lies beside a
// rollout and not what lies in the store, so the test above can fail. 0.58
// resolves an id by a fuzzy search of the file names under sessions/ that
// keeps the best match only (find_conversation_path_by_id_str in
// codex-rs/core/src/rollout/list.rs, rust-v0.58.0); among several names
// with the id, which one wins depends on directory order. So the rollout
// itself leaves sessions/ first: then a search that sees any artifact must
// open one. With the artifacts in the store Codex must find no session and
// resume nothing (0.58 then starts a new session); with the same files beside where the rollout was, it must
// open one of them: append to it, or fail to read it as a rollout
// ("failed to parse conversation ID from rollout file").
func contrast(ctx context.Context, t *testing.T, h *conformance.Home, path, id string) {
	away := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.Rename(path, away); err != nil {
		t.Fatal(err)
	}
	place, _ := artifacts.For(path)
	store, _ := filepath.Rel(h.Dir, place.Dir)
	beside, _ := filepath.Rel(h.Dir, filepath.Dir(path))

	run, err := h.Resume(ctx, id, conformance.Marker+" msg")
	if err != nil {
		t.Fatal(err)
	}
	// 0.58's exec resume of an id it cannot find starts a new session.
	for _, ch := range run.Changes {
		if ch.What != "created" || conformance.SessionID(filepath.Join(h.Dir, ch.Path)) == id {
			t.Errorf("with the rollout gone and the artifacts in %s, codex 0.58 %s %s: it found the session in our files", store, ch.What, ch.Path)
		}
	}
	t.Logf("rollout gone, artifacts in the store: codex 0.58 exit %d, %v: no session found", run.ExitCode, changed(run))

	es, err := os.ReadDir(place.Dir)
	if err != nil || len(es) == 0 {
		t.Fatalf("the store holds nothing to move beside the rollout (%v)", err)
	}
	for _, e := range es {
		if err := os.Rename(filepath.Join(place.Dir, e.Name()), filepath.Join(filepath.Dir(path), e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	run, err = h.Resume(ctx, id, conformance.Marker+" msg")
	if err != nil {
		t.Fatal(err)
	}
	var opened []string // the artifacts beside the rollout Codex changed
	for _, ch := range run.Changes {
		if ch.What != "created" && strings.HasPrefix(ch.Path, beside+string(filepath.Separator)) {
			opened = append(opened, ch.What+" "+filepath.Base(ch.Path))
		}
	}
	switch {
	case len(opened) > 0:
		t.Logf("artifacts beside the rollout: codex 0.58 resumed one of them: exit %d, %v", run.ExitCode, opened)
	case run.ExitCode != 0 && strings.Contains(run.Stderr, "rollout file"):
		t.Logf("artifacts beside the rollout: codex 0.58 opened one of them and failed: exit %d: %s", run.ExitCode, lastLine(run.Stderr))
	default:
		t.Errorf("with the artifacts beside where the rollout was, codex 0.58 opened none of them: the test would prove nothing (exit %d, changed %v)\n%s", run.ExitCode, changed(run), run.Stderr)
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func changed(run *conformance.Run) []string {
	var out []string
	for _, ch := range run.Changes {
		out = append(out, ch.What+" "+filepath.Base(ch.Path))
	}
	return out
}
