// Package lineage finds the rollouts a rollout continues and the ones that
// continue it, as Codex does. It is the read side of a Codex home
// (internal/codex), after the engine: it reads heads with rollout/, hands
// reconstruct/ the ancestry a replay starts from, and answers checks, the
// derived models and the edits which rollouts belong together.
//
// Since 0.147 a paginated fork or revert is a new rollout whose
// session_meta.history_base names the rollout it continues by rollout id
// (history_base.thread_id), with the byte offset and ordinal its inherited
// prefix ends at. Codex finds that rollout by file name under the home's
// sessions/ and then archived_sessions/, plain or .zst
// (find_rollout_path_by_rollout_id, codex-rs/rollout/src/list.rs; the
// rollout id is the part of the name after the thread id's '_', or the
// thread id, RolloutFileName::parse), follows the chain to its root and
// rejects it as "invalid paginated history lineage" in six cases
// (resolve_rollout_lineage_with_representation and validate_cutoff_bounds,
// codex-rs/thread-store/src/local/rollout_lineage.rs, openai/codex
// rust-v0.147.0 04f47de343 and 8d4d57387a "Resolve paginated thread history
// by rollout ID" #38244; the same messages measured with 0.153.4 and
// 0.171.0). Compression and deletion ask the inverse question, which
// rollouts a rollout is referenced by (RolloutReferenceIndex,
// codex-rs/rollout/src/rollout_reference_index.rs, #34566): a referenced
// rollout is immutable.
//
// An Index answers both over a set of rollout files: the inputs of a
// command and, for each input in a Codex home (a directory holding
// sessions/ or archived_sessions/), that whole home, as Codex searches it.
// Heads (session_meta lines) are read once, when first needed.
//
// On top of an Index: Select picks the rollouts a command reads (a walk,
// then --shard by lineage), ForFile indexes around a single file, and
// Expand lists a thread's rollouts with their lineage (rollout find). It
// sits after home/ in the flow and before every analysis.
package lineage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/rollout-dev/rollout/internal/base/objstore"
	"github.com/rollout-dev/rollout/internal/codex/forest"
	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/rollout"
)

// Rollout is one rollout file an Index knows.
type Rollout struct {
	Path string
	// ID is the rollout id Codex finds the file by: the file name's, else
	// (a file not named as Codex names rollouts) its session_meta id.
	ID   string
	Name rollout.Name // what the file name says ("" ids when it says nothing)

	once sync.Once
	meta rollout.Meta
	err  error
}

// Meta is the file's session_meta (read on first use). A file that cannot
// be read has an error and an empty Meta.
func (r *Rollout) Meta() (rollout.Meta, error) {
	r.once.Do(func() {
		r.meta, r.err = rollout.ReadMeta(r.Path)
		if r.ID == "" {
			r.ID = r.meta.ThreadID
		}
	})
	return r.meta, r.err
}

// Known indexes exactly the rollouts whose heads a manifest already read:
// metas[i] is what paths[i]'s session_meta says (errs[i] why it could not
// be read), so the index reads no file to resolve their lineages.
func Known(paths []string, metas []rollout.Meta, errs []error) *Index {
	ix := newIndex()
	for i, p := range paths {
		r := ix.add(p)
		r.once.Do(func() {
			r.meta, r.err = metas[i], errs[i]
			if r.ID == "" {
				r.ID = r.meta.ThreadID
			}
		})
	}
	return ix
}

// Index is a set of rollouts, found by rollout id and by path.
type Index struct {
	mu       sync.Mutex
	all      []*Rollout
	byPath   map[string]*Rollout
	byID     map[string]*Rollout // the first in Codex's search order (rank, then as added)
	unnamed  []*Rollout          // files whose name carries no id: found by id once their head is read
	homes    map[string]bool     // homes indexed whole
	walkDirs []string            // directories not walked yet (walked on first need)
	refsDone bool
	refs     map[string][]*Rollout // rollout id -> the rollouts whose history_base names it
	wd       string                // the working directory, once read (key)
}

// New indexes the rollout files paths (already discovered; "-" is
// skipped) and the whole Codex home each of them lies in. dirs are walked
// too: the directory of a single file a command reads, so that its
// siblings resolve. The walks wait until a query needs them: a run whose
// forks' sources are among its inputs never walks.
func New(paths []string, dirs ...string) *Index {
	ix := newIndex()
	for _, p := range paths {
		if p == rollout.StdinPath {
			continue
		}
		if h, ok := home.Layout(p); ok && !ix.homes[h] {
			ix.homes[h] = true
			// Codex searches a home's sessions/, then archived_sessions/.
			ix.walkDirs = append(ix.walkDirs, filepath.Join(h, home.SessionsDir), filepath.Join(h, home.ArchivedSessionsDir))
		}
	}
	for _, p := range paths {
		if p != rollout.StdinPath {
			ix.add(p)
		}
	}
	ix.walkDirs = append(ix.walkDirs, dirs...)
	return ix
}

func newIndex() *Index {
	return &Index{byPath: map[string]*Rollout{}, byID: map[string]*Rollout{}, homes: map[string]bool{}}
}

// Files indexes exactly the rollout files paths, in that order (the search
// order), walking nothing.
func Files(paths []string) *Index {
	ix := newIndex()
	for _, p := range paths {
		if p != rollout.StdinPath {
			ix.add(p)
		}
	}
	return ix
}

// walked walks the directories New left for later. Call with ix.mu held.
func (ix *Index) walked() {
	dirs := ix.walkDirs
	ix.walkDirs = nil
	for _, d := range dirs {
		ix.walk(d)
	}
}

// rank is where Codex finds a rollout first: a home's sessions/ (0), its
// archived_sessions/ (1), anywhere else (2).
func rank(path string) int {
	dir := filepath.ToSlash(filepath.Dir(path))
	switch {
	case strings.Contains("/"+dir+"/", "/"+home.SessionsDir+"/"):
		return 0
	case strings.Contains("/"+dir+"/", "/"+home.ArchivedSessionsDir+"/"):
		return 1
	}
	return 2
}

// HomeFiles are the rollout files of a Codex home in Codex's search order:
// sessions/, then archived_sessions/, each walked in name order (.zst
// twins of plain files left out, as everywhere).
func HomeFiles(dir string) []string {
	var out []string
	for _, sub := range []string{home.SessionsDir, home.ArchivedSessionsDir} {
		d := filepath.Join(dir, sub)
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		if found, err := rollout.Discover([]string{d}); err == nil {
			out = append(out, found.Paths...)
		}
	}
	return out
}

// ForHome indexes a whole Codex home.
func ForHome(dir string) *Index {
	return New(nil, filepath.Join(dir, home.SessionsDir), filepath.Join(dir, home.ArchivedSessionsDir)).covering(dir)
}

func (ix *Index) covering(dir string) *Index {
	if abs, err := filepath.Abs(dir); err == nil {
		ix.homes[abs] = true
	}
	return ix
}

// walk adds the rollouts of a directory tree (nothing when it does not
// exist or holds none).
func (ix *Index) walk(dir string) {
	if !objstore.IsURI(dir) { // a prefix is listed by Discover as a directory is walked
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return
		}
	}
	d, err := rollout.Discover([]string{dir})
	if err != nil {
		return
	}
	for _, p := range d.Paths {
		ix.add(p)
	}
}

// key is the absolute form of path (filepath.Abs, with the working
// directory read once per index: not two stat calls per file).
func (ix *Index) key(path string) string {
	if objstore.IsURI(path) {
		return path
	}
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	if ix.wd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return filepath.Clean(path)
		}
		ix.wd = wd
	}
	return filepath.Join(ix.wd, path)
}

func (ix *Index) add(path string) *Rollout {
	k := ix.key(path)
	if r := ix.byPath[k]; r != nil {
		return r
	}
	r := &Rollout{Path: path}
	if n, ok := rollout.ParseName(path); ok {
		r.Name, r.ID = n, n.Rollout
	}
	ix.all = append(ix.all, r)
	ix.byPath[k] = r
	switch held := ix.byID[r.ID]; {
	case r.ID == "":
		ix.unnamed = append(ix.unnamed, r)
	case held == nil || rank(r.Path) < rank(held.Path):
		ix.byID[r.ID] = r
	}
	ix.refsDone = false
	return r
}

// Of is the rollout at path, added to the index when it is not in it.
func (ix *Index) Of(path string) *Rollout {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.add(path)
}

// Lookup is the rollout with a rollout id (nil: none is indexed).
func (ix *Index) Lookup(id string) *Rollout {
	id = strings.ToLower(id)
	ix.mu.Lock()
	if r := ix.byID[id]; r == nil || rank(r.Path) > 0 {
		ix.walked() // a file of a home's sessions/ would come first
	}
	r, unnamed := ix.byID[id], ix.unnamed
	ix.mu.Unlock()
	if r != nil {
		return r
	}
	for _, u := range unnamed {
		if m, _ := u.Meta(); m.ThreadID == id {
			return u
		}
	}
	return nil
}

// Covers reports whether the index holds the whole Codex home path lies
// in: a rollout it does not find there is not in the home, as Codex would
// not find it either.
func (ix *Index) Covers(path string) bool {
	h, ok := home.Layout(path)
	if !ok {
		return false
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.homes[h]
}

// Rollouts lists the indexed rollouts, in the order they were added.
func (ix *Index) Rollouts() []*Rollout {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.walked()
	return slices.Clone(ix.all)
}

// ReferencedBy lists the rollouts whose history_base names the rollout id
// id (a rollout naming itself does not count, as in Codex's index), in
// index order. It reads every indexed head once.
func (ix *Index) ReferencedBy(id string) []*Rollout {
	id = strings.ToLower(id)
	all := ix.Rollouts()
	ix.mu.Lock()
	done := ix.refsDone
	ix.mu.Unlock()
	if !done {
		refs := map[string][]*Rollout{}
		for _, r := range all {
			m, err := r.Meta()
			if err != nil || m.Base == nil || m.Base.RolloutID == "" || m.Base.RolloutID == r.ID {
				continue
			}
			refs[m.Base.RolloutID] = append(refs[m.Base.RolloutID], r)
		}
		ix.mu.Lock()
		ix.refs, ix.refsDone = refs, true
		ix.mu.Unlock()
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return slices.Clone(ix.refs[id])
}

// ShardKeys gives each of paths the key --shard K/N hashes: the rollout id
// at the top of its lineage (forest.Forest.Top over the history_base links
// of every indexed rollout: the root, or the source a chain names that the
// index does not have), so that a fork, its parent and their other
// descendants land in one shard; a file that names no rollout id keeps its
// path. Every shard of a run sees the same inputs, so computes the same
// keys.
func (ix *Index) ShardKeys(paths []string) map[string]string {
	all := ix.Rollouts()
	nodes := make([]forest.Node, len(all))
	at := make(map[*Rollout]int, len(all))
	for i, r := range all {
		m, _ := r.Meta()
		nodes[i].ID = r.ID
		if m.Base != nil && m.Base.Malformed == "" {
			nodes[i].Parent = m.Base.RolloutID
		}
		at[r] = i
	}
	trees := forest.New(nodes)
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		out[p] = p
		if p == rollout.StdinPath {
			continue
		}
		if i, ok := at[ix.Of(p)]; ok && trees.Top(i) != "" {
			out[p] = trees.Top(i)
		}
	}
	return out
}
