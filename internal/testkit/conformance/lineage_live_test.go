package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/codex/lineage"
)

// lineageCase is a variant of a fork golden's home: the parent and the
// child as Codex wrote them, changed by edit, resumed by Codex.
type lineageCase struct {
	name string
	edit func(t *testing.T, f *forkFiles)
	// rule is the finding verify makes on the child's line 1 and refusal
	// what Codex says when it refuses ("": Codex resumes it, and rebuilds
	// what `rollout state` rebuilds).
	rule, refusal string
}

// forkFiles are a fork golden's rollouts by path in the home.
type forkFiles struct {
	files         map[string][]byte
	parent, child string // paths of the two in files
}

func (f *forkFiles) setChildBase(t *testing.T, key string, val any) {
	t.Helper()
	first, rest, _ := bytes.Cut(f.files[f.child], []byte("\n"))
	var rec map[string]any
	if err := json.Unmarshal(first, &rec); err != nil {
		t.Fatal(err)
	}
	rec["payload"].(map[string]any)["history_base"].(map[string]any)[key] = val
	b, _ := json.Marshal(rec)
	f.files[f.child] = append(append(b, '\n'), rest...)
}

func (f *forkFiles) parentSize() float64 { return float64(len(f.files[f.parent])) }

var lineageCases = []lineageCase{
	{name: "fork", edit: func(*testing.T, *forkFiles) {}},
	{name: "archived parent", edit: func(t *testing.T, f *forkFiles) {
		f.files["archived_sessions/"+filepath.Base(f.parent)] = f.files[f.parent]
		delete(f.files, f.parent)
	}},
	{name: "zst parent", edit: func(t *testing.T, f *forkFiles) {
		enc, _ := zstd.NewWriter(nil)
		f.files[f.parent+".zst"] = enc.EncodeAll(f.files[f.parent], nil)
		delete(f.files, f.parent)
	}},
	{name: "missing source", rule: "lineage/missing-source", refusal: "missing source rollout", edit: func(t *testing.T, f *forkFiles) {
		f.setChildBase(t, "thread_id", "01a23300-0000-7000-8000-000000000000")
	}},
	{name: "cycle", rule: "lineage/cycle", refusal: "cycle detected", edit: func(t *testing.T, f *forkFiles) {
		f.setChildBase(t, "thread_id", sessionIDOf(f.files[f.child]))
	}},
	{name: "source not paginated", rule: "lineage/source-not-paginated", refusal: "source rollout is not paginated", edit: func(t *testing.T, f *forkFiles) {
		first, rest, _ := bytes.Cut(f.files[f.parent], []byte("\n"))
		f.files[f.parent] = append(bytes.Replace(first, []byte(`"history_mode":"paginated"`), []byte(`"history_mode":"legacy"`), 1), append([]byte("\n"), rest...)...)
	}},
	{name: "cutoff includes meta", rule: "lineage/cutoff-includes-meta", refusal: "cutoff cannot include source session metadata", edit: func(t *testing.T, f *forkFiles) {
		f.setChildBase(t, "end_ordinal_exclusive", 0)
	}},
	{name: "cutoff past end", rule: "lineage/cutoff-past-end", refusal: "cutoff byte offset is past the source rollout", edit: func(t *testing.T, f *forkFiles) {
		f.setChildBase(t, "end_byte_offset", f.parentSize()+100)
	}},
	// Codex resumes a cutoff inside a line, without the record it cuts:
	// here the parent's last assistant message.
	{name: "cutoff off boundary", rule: "lineage/cutoff-off-boundary", edit: func(t *testing.T, f *forkFiles) {
		p := f.files[f.parent]
		at := bytes.LastIndex(p, []byte(`"role":"assistant"`))
		start := bytes.LastIndexByte(p[:at], '\n') + 1
		f.setChildBase(t, "end_byte_offset", float64(start+10))
	}},
}

// sessionIDOf is the session_meta id of a rollout's bytes.
func sessionIDOf(b []byte) string {
	first, _, _ := bytes.Cut(b, []byte("\n"))
	var rec struct {
		Payload struct {
			ID string `json:"id"`
		} `json:"payload"`
	}
	json.Unmarshal(first, &rec)
	return rec.Payload.ID
}

// TestLiveLineage resumes variants of each version's fork golden (a fork
// made by `codex exec fork`) with that Codex, with
// ROLLOUT_CONFORMANCE_VERSIONS="0.153.4 0.171.0": a fork whose parent is
// in sessions/, in archived_sessions/ or compressed is resumed, and Codex
// rebuilds what `rollout state` rebuilds from the same files; each broken
// lineage Codex refuses with its message, and `rollout verify` reports it
// at the child's line 1 with the rule of that case; a cutoff inside a line
// Codex resumes without the record it cuts, as `rollout state` does, and
// verify warns.
func TestLiveLineage(t *testing.T) {
	versions := strings.Fields(strings.ReplaceAll(os.Getenv("ROLLOUT_CONFORMANCE_VERSIONS"), ",", " "))
	if len(versions) == 0 {
		t.Skip("set ROLLOUT_CONFORMANCE_VERSIONS to run the live harness")
	}
	ctx := context.Background()
	for _, v := range versions {
		golden := filepath.Join("testdata", v, "fork")
		if _, err := os.Stat(golden); err != nil {
			continue // a version without forks
		}
		c, err := Install(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		g, err := ReadGolden(golden)
		if err != nil {
			t.Fatal(err)
		}
		for _, lc := range lineageCases {
			t.Run(v+"/"+lc.name, func(t *testing.T) {
				f := &forkFiles{files: map[string][]byte{}, child: g.Judged}
				root := filepath.Join(golden, "session")
				filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
					if err == nil && d.Type().IsRegular() {
						rel, _ := filepath.Rel(root, p)
						f.files[filepath.ToSlash(rel)], _ = os.ReadFile(p)
						if filepath.ToSlash(rel) != g.Judged {
							f.parent = filepath.ToSlash(rel)
						}
					}
					return nil
				})
				lc.edit(t, f)
				// rollout's side: the same files in a home of their own.
				home := t.TempDir()
				for rel, b := range f.files {
					p := filepath.Join(home, filepath.FromSlash(rel))
					os.MkdirAll(filepath.Dir(p), 0o755)
					if err := os.WriteFile(p, b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				child := filepath.Join(home, filepath.FromSlash(f.child))
				res, err := checks.Run(child, nil, checks.Options{Lineage: lineage.New([]string{child}).Ancestry})
				if err != nil {
					t.Fatal(err)
				}
				var rules []string
				for _, fd := range res.Findings {
					if fd.Line == 1 && strings.HasPrefix(fd.Rule, "lineage/") {
						rules = append(rules, fd.Rule)
					}
				}
				m := NewMock()
				defer m.Close()
				o, err := Resume(ctx, c, m, f.files, f.child, sessionIDOf(f.files[f.child]), t.TempDir(), false)
				if err != nil {
					t.Fatal(err)
				}
				if lc.refusal != "" {
					if o.ExitCode == 0 || !strings.Contains(o.Stderr, lc.refusal) {
						t.Errorf("Codex %s: exit %d, stderr %q; want a refusal saying %q", v, o.ExitCode, o.Stderr, lc.refusal)
					}
					if !slices.Equal(rules, []string{lc.rule}) {
						t.Errorf("verify: lineage findings on line 1 %v, want %s", rules, lc.rule)
					}
					return
				}
				if o.ExitCode != 0 {
					t.Fatalf("Codex %s refused the %s: %s", v, lc.name, o.Stderr)
				}
				var want []string
				if lc.rule != "" {
					want = []string{lc.rule}
				}
				if !slices.Equal(rules, want) {
					t.Errorf("verify: lineage findings on line 1 %v on a lineage Codex resumes, want %v", rules, want)
				}
				d, err := Compare(child, v, o)
				if err != nil {
					t.Fatal(err)
				}
				if d != "" {
					t.Errorf("rollout state differs from what Codex %s rebuilt:\n%s", v, d)
				}
			})
		}
	}
}
