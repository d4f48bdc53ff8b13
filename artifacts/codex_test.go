package artifacts_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rollout-dev/rollout/artifacts"
	"github.com/rollout-dev/rollout/conformance"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/repair"
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
// can fail.
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
			// The contrast: the same files beside the rollout.
			place, _ := artifacts.For(path)
			es, _ := os.ReadDir(place.Dir)
			for _, e := range es {
				os.Rename(filepath.Join(place.Dir, e.Name()), filepath.Join(filepath.Dir(path), e.Name()))
			}
			run, err = h.Resume(ctx, id, conformance.Marker+" msg")
			if err != nil {
				t.Fatal(err)
			}
			wrong := run.ExitCode != 0
			for _, ch := range run.Changes {
				wrong = wrong || ch.Path != rel[0] && strings.HasPrefix(ch.Path, "sessions")
			}
			if !wrong {
				t.Errorf("with the artifacts beside the rollout, codex 0.58 resumed the rollout all the same: the test would prove nothing (exit %d)\n%s", run.ExitCode, run.Stderr)
			} else {
				t.Logf("beside the rollout, codex 0.58: exit %d, changed %+v: %s", run.ExitCode, changed(run), firstLine(run.Stderr))
			}
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
