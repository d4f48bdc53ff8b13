package lineage_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
	"github.com/rollout-dev/rollout/reconstruct"
)

func writeTree(t *testing.T, tree lineagegen.Tree) (string, map[string]*lineagegen.File) {
	t.Helper()
	dir := t.TempDir()
	files, err := lineagegen.Write(dir, tree)
	if err != nil {
		t.Fatal(err)
	}
	return dir, files
}

func paths(dir string, files map[string]*lineagegen.File) []string {
	var out []string
	for _, f := range files {
		out = append(out, filepath.Join(dir, f.Path))
	}
	slices.Sort(out)
	return out
}

func findings(res *checks.Result) []string {
	var out []string
	for _, f := range res.Findings {
		out = append(out, f.Rule)
	}
	return out
}

// TestStandardTree: every rollout of the standard tree (a parent, a fork,
// a fork of the fork cut inside it, a revert, an archived parent, a .zst
// parent, a sub-agent) verifies without a finding, and its rebuilt history
// is the one an independent reading of the files gives: the prefixes of
// the chain, root first, then the file, with rollbacks applied.
func TestStandardTree(t *testing.T) {
	dir, files := writeTree(t, lineagegen.Standard)
	ix := lineage.New(paths(dir, files))
	for _, n := range lineagegen.Standard {
		t.Run(n.Name, func(t *testing.T) {
			f := files[n.Name]
			p := filepath.Join(dir, f.Path)
			res, err := checks.Run(p, nil, checks.Options{Lineage: ix.Ancestry})
			if err != nil {
				t.Fatal(err)
			}
			if got := findings(res); len(got) > 0 {
				for _, fd := range res.Findings {
					t.Errorf("line %d: %s: %s", fd.Line, fd.Rule, fd.Message)
				}
			}
			want := expectHistory(t, dir, files, n.Name)
			var got []string
			for it := range res.State.History.All() {
				got = append(got, it.ID)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("history ids differ (-independent reading +engine):\n%s", diff)
			}
		})
	}
}

// TestWithoutLineage: the same files verified without their lineage (no
// index) are judged without the prefix: no false finding either, but the
// history is the file's own, which is how a test that lost the lineage
// would fail.
func TestWithoutLineage(t *testing.T) {
	dir, files := writeTree(t, lineagegen.Standard)
	for _, name := range []string{"fork", "fork2", "revert", "zst-fork"} {
		p := filepath.Join(dir, files[name].Path)
		res, err := checks.Run(p, nil, checks.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := findings(res); len(got) > 0 {
			t.Errorf("%s without its lineage: findings %v, want none (the inherited prefix is unknown)", name, got)
		}
		if want := expectHistory(t, dir, files, name); res.State.History.Len() >= len(want) && len(want) > 0 {
			t.Errorf("%s without its lineage rebuilt %d items, the lineage has %d: the test cannot tell them apart", name, res.State.History.Len(), len(want))
		}
	}
}

// expectHistory reads the chain of node name from the files, without the
// engine: each rollout from after its session_meta up to the cutoff its
// child names, split into turns at task_started, the response items of
// each, a rollback dropping the last user turns.
func expectHistory(t *testing.T, dir string, files map[string]*lineagegen.File, name string) []string {
	t.Helper()
	byRollout := map[string]*lineagegen.File{}
	for _, f := range files {
		byRollout[f.Rollout] = f
	}
	type seg struct {
		f   *lineagegen.File
		end int64
	}
	var chain []seg
	f := files[name]
	end := int64(-1)
	for f != nil {
		chain = append([]seg{{f, end}}, chain...)
		data, err := lineagegen.Read(dir, f)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := bytes.Cut(data, []byte("\n"))
		var meta struct {
			Payload struct {
				Base *struct {
					ThreadID string `json:"thread_id"`
					End      int64  `json:"end_byte_offset"`
				} `json:"history_base"`
			} `json:"payload"`
		}
		json.Unmarshal(first, &meta)
		if meta.Payload.Base == nil {
			break
		}
		f, end = byRollout[meta.Payload.Base.ThreadID], meta.Payload.Base.End
	}
	var turns [][]string // items per turn; turns[0] holds what precedes any turn
	turns = append(turns, nil)
	for _, s := range chain {
		data, err := lineagegen.Read(dir, s.f)
		if err != nil {
			t.Fatal(err)
		}
		if s.end >= 0 {
			data = data[:s.end]
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		sc.Scan() // session_meta
		for sc.Scan() {
			var rec struct {
				Type    string `json:"type"`
				Payload struct {
					Type     string `json:"type"`
					ID       string `json:"id"`
					NumTurns int    `json:"num_turns"`
				} `json:"payload"`
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			switch {
			case rec.Type == "event_msg" && rec.Payload.Type == "task_started":
				turns = append(turns, nil)
			case rec.Type == "event_msg" && rec.Payload.Type == "thread_rolled_back":
				turns = turns[:max(1, len(turns)-rec.Payload.NumTurns)]
			case rec.Type == "response_item":
				turns[len(turns)-1] = append(turns[len(turns)-1], rec.Payload.ID)
			}
		}
	}
	var out []string
	for _, tr := range turns {
		out = append(out, tr...)
	}
	return out
}

// breakFork rewrites the fork's session_meta with edit and returns the
// fork's path.
func breakFork(t *testing.T, dir string, f *lineagegen.File, edit func(meta map[string]any)) string {
	t.Helper()
	p := filepath.Join(dir, f.Path)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	var rec map[string]any
	if err := json.Unmarshal(first, &rec); err != nil {
		t.Fatal(err)
	}
	edit(rec["payload"].(map[string]any))
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(p, append(append(b, '\n'), rest...), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBrokenVariants: each of Codex's invalid-lineage cases, and a cutoff
// off its boundary, made in the fork of the standard tree, is found on the
// fork's line 1, and on the fork of the fork, which inherits it, through
// the fork; nothing else is reported.
func TestBrokenVariants(t *testing.T) {
	base := func(m map[string]any) map[string]any { return m["history_base"].(map[string]any) }
	tests := []struct {
		rule string
		edit func(meta map[string]any, files map[string]*lineagegen.File, dir string)
		also []string // other findings on the fork
	}{
		{"lineage/missing-source", func(m map[string]any, _ map[string]*lineagegen.File, _ string) {
			base(m)["thread_id"] = "01a0b000-0000-7000-8000-000000000000"
		}, nil},
		{"lineage/cycle", func(m map[string]any, fs map[string]*lineagegen.File, _ string) {
			base(m)["thread_id"] = fs["fork"].Rollout
		}, nil},
		{"lineage/other-thread", func(m map[string]any, fs map[string]*lineagegen.File, dir string) {
			// The parent's session_meta names another thread than its file.
			breakFork(t, dir, fs["parent"], func(pm map[string]any) { pm["id"] = "01a0b000-0000-7000-8000-0000000000aa" })
		}, nil},
		{"lineage/source-not-paginated", func(m map[string]any, fs map[string]*lineagegen.File, dir string) {
			breakFork(t, dir, fs["parent"], func(pm map[string]any) { pm["history_mode"] = "legacy" })
		}, nil},
		{"lineage/cutoff-includes-meta", func(m map[string]any, _ map[string]*lineagegen.File, _ string) {
			base(m)["end_ordinal_exclusive"] = 0
		}, []string{"ordinal/gap"}},
		{"lineage/cutoff-past-end", func(m map[string]any, _ map[string]*lineagegen.File, _ string) {
			base(m)["end_byte_offset"] = base(m)["end_byte_offset"].(float64) + 100
		}, nil},
		{"lineage/cutoff-off-boundary", func(m map[string]any, _ map[string]*lineagegen.File, _ string) {
			base(m)["end_byte_offset"] = base(m)["end_byte_offset"].(float64) - 10
		}, nil},
		{"lineage/malformed-base", func(m map[string]any, _ map[string]*lineagegen.File, _ string) {
			base(m)["end_byte_offset"] = "many"
		}, nil},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.rule, "lineage/"), func(t *testing.T) {
			dir, files := writeTree(t, lineagegen.Standard)
			fork := breakFork(t, dir, files["fork"], func(m map[string]any) { tt.edit(m, files, dir) })
			ix := lineage.New(paths(dir, files))
			res, err := checks.Run(fork, nil, checks.Options{Lineage: ix.Ancestry})
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string{tt.rule}, tt.also...)
			slices.Sort(want)
			got := findings(res)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("fork: findings %v, want %v", got, want)
			}
			for _, fd := range res.Findings {
				if fd.Rule == tt.rule && (fd.Line != 1 || fd.ByteOffset != 0) {
					t.Errorf("%s at line %d (offset %d), want line 1: the fork's session_meta", fd.Rule, fd.Line, fd.ByteOffset)
				}
			}
			// The fork of the fork inherits the fault (a cutoff past or
			// off the fork's own content excepted: its cutoff into the
			// fork is fine).
			res2, err := checks.Run(filepath.Join(dir, files["fork2"].Path), nil, checks.Options{Lineage: ix.Ancestry})
			if err != nil {
				t.Fatal(err)
			}
			got2 := findings(res2)
			if !slices.Contains(got2, tt.rule) || len(got2) != 1 {
				t.Fatalf("fork2: findings %v, want only %s, inherited", got2, tt.rule)
			}
			if fd := res2.Findings[0]; !strings.Contains(fd.Message, "(through "+fork+")") || fd.Line != 1 {
				t.Errorf("fork2: line %d: %s; want line 1, naming the fork it comes through", fd.Line, fd.Message)
			}
		})
	}
}

// TestNotAmongInputs: a fork verified alone, outside any Codex home, whose
// parent is not among the inputs, has no finding and a note that says so.
func TestNotAmongInputs(t *testing.T) {
	dir, files := writeTree(t, lineagegen.Standard)
	loose := t.TempDir()
	data, err := os.ReadFile(filepath.Join(dir, files["fork"].Path))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(loose, filepath.Base(files["fork"].Path))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ix := lineage.New([]string{p})
	c := ix.Resolve(p)
	if c.Absent != files["parent"].Rollout || c.Ancestry != nil {
		t.Fatalf("Resolve = %+v, want the parent %s absent", c, files["parent"].Rollout)
	}
	if note := c.Note(p); !strings.Contains(note, "not among the rollouts read") || !strings.Contains(note, files["parent"].Rollout) {
		t.Errorf("note %q does not say the parent was not read", note)
	}
	r := lineage.NewResolver(ix)
	res, err := checks.Run(p, nil, checks.Options{Lineage: r.Ancestry})
	if err != nil {
		t.Fatal(err)
	}
	if got := findings(res); len(got) > 0 {
		t.Errorf("findings %v, want none", got)
	}
	r.Ancestry(p) // noted once
	if got, want := r.Notes(), []string{c.Note(p)}; !slices.Equal(got, want) {
		t.Errorf("Resolver.Notes = %q, want %q", got, want)
	}
	// In a Codex home whose parent is gone, the same fork is broken.
	if err := os.Remove(filepath.Join(dir, files["parent"].Path)); err != nil {
		t.Fatal(err)
	}
	ix = lineage.New([]string{filepath.Join(dir, files["fork"].Path)})
	res, err = checks.Run(filepath.Join(dir, files["fork"].Path), nil, checks.Options{Lineage: ix.Ancestry})
	if err != nil {
		t.Fatal(err)
	}
	if got := findings(res); !slices.Equal(got, []string{"lineage/missing-source"}) {
		t.Errorf("in its home without the parent: findings %v, want lineage/missing-source", got)
	}
}

// TestReferencedBy: the reference index lists the rollouts whose
// history_base names a rollout, across sessions/ and archived_sessions/
// and .zst, and nothing for a rollout no file continues.
func TestReferencedBy(t *testing.T) {
	dir, files := writeTree(t, lineagegen.Standard)
	ix := lineage.ForHome(dir)
	names := func(id string) []string {
		var out []string
		for _, r := range ix.ReferencedBy(id) {
			for n, f := range files {
				if filepath.Join(dir, f.Path) == r.Path {
					out = append(out, n)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	for _, tt := range []struct {
		of   string
		want []string
	}{
		{"parent", []string{"fork", "revert"}},
		{"fork", []string{"fork2"}},
		{"archived", []string{"archived-fork"}},
		{"zst", []string{"zst-fork"}},
		{"fork2", nil},
		{"subagent", nil},
	} {
		if got := names(files[tt.of].Rollout); !slices.Equal(got, tt.want) {
			t.Errorf("ReferencedBy(%s) = %v, want %v", tt.of, got, tt.want)
		}
	}
}

var _ = reconstruct.InheritedRecord

// TestShardKeys: every rollout of a lineage gets the key of its root, so
// --shard puts them in one shard; a sub-agent (no history_base) and each
// root are their own.
func TestShardKeys(t *testing.T) {
	dir, files := writeTree(t, lineagegen.Standard)
	all := paths(dir, files)
	keys := lineage.New(all).ShardKeys(all)
	key := func(name string) string { return keys[filepath.Join(dir, files[name].Path)] }
	for _, tt := range []struct{ name, root string }{
		{"parent", "parent"}, {"fork", "parent"}, {"fork2", "parent"}, {"revert", "parent"},
		{"archived", "archived"}, {"archived-fork", "archived"}, {"zst", "zst"}, {"zst-fork", "zst"},
		{"subagent", "subagent"},
	} {
		if got, want := key(tt.name), files[tt.root].Rollout; got != want {
			t.Errorf("%s: shard key %s, want %s (the rollout id of %s)", tt.name, got, want, tt.root)
		}
	}
	// A fork whose parent is not among the inputs still goes with it: its
	// key is the parent's rollout id.
	fork := filepath.Join(dir, files["fork"].Path)
	if got := lineage.New([]string{fork}).ShardKeys([]string{fork})[fork]; got != files["parent"].Rollout {
		t.Errorf("a fork alone: key %s, want its parent's rollout id %s", got, files["parent"].Rollout)
	}
}
