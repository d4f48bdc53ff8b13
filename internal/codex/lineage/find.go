package lineage

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rollout-dev/rollout/internal/base/objstore"
	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/rollout"
)

// Found is a rollout of a thread search: a match, or a rollout of a
// match's lineage.
type Found struct {
	rollout.ThreadMatch
	// Current marks the current rollout of a thread that has several
	// (home.Current).
	Current bool
	// Inherited is set for a rollout of the lineage: the rollout
	// ContinuedBy continues it up to byte UpTo.
	Inherited   bool
	ContinuedBy string
	UpTo        int64
	// AttachedTo is the thread this rollout's thread is attached to (a
	// side conversation: its threads row's attached_thread_parent_id);
	// ParentOf the attached thread this rollout was listed as the parent
	// of. ViaAttachment: listed because of such an edge, not by the query
	// or a history_base (WithAttached).
	AttachedTo    string
	ParentOf      string
	ViaAttachment bool
}

// Attachment says how an attached-thread edge of the home's threads index
// relates the rollout to the others listed ("" when none does): for
// rollout find --long.
func (f Found) Attachment() string {
	switch {
	case f.ViaAttachment && f.AttachedTo != "":
		return fmt.Sprintf("attached: its thread is a side conversation attached to thread %s (threads.attached_thread_parent_id)", f.AttachedTo)
	case f.ViaAttachment:
		return fmt.Sprintf("attached: thread %s is attached to its thread (threads.attached_thread_parent_id)", f.ParentOf)
	case f.AttachedTo != "" && f.ParentOf != "":
		return fmt.Sprintf("attached to thread %s; thread %s is attached to it", f.AttachedTo, f.ParentOf)
	case f.AttachedTo != "":
		return fmt.Sprintf("attached to thread %s", f.AttachedTo)
	case f.ParentOf != "":
		return fmt.Sprintf("thread %s is attached to it", f.ParentOf)
	}
	return ""
}

// WithAttached adds to found the attached-thread edges of the home's
// threads index (Codex 0.169+): after the rollouts found, the current
// rollouts of the threads attached to a thread found, and for an attached
// thread its parent's, when they are not listed yet (an attached thread is a
// paginated fork of its parent, so its parent's rollout usually is, as
// the history it continues). Found rollouts on either end of an edge are
// marked. A home without the index or the column adds nothing.
func WithAttached(found []Found, h *home.Home) []Found {
	rows, err := h.AttachedThreads()
	if err != nil || len(rows) == 0 {
		return found
	}
	children := map[string][]home.Thread{}
	attachedTo := map[string]string{}
	for _, t := range rows {
		if t.AttachedTo != "" {
			p := strings.ToLower(t.AttachedTo)
			children[p] = append(children[p], t)
			attachedTo[strings.ToLower(t.ID)] = t.AttachedTo
		}
	}
	if len(children) == 0 {
		return found
	}
	listed := map[string]int{} // thread id -> index in out of its first rollout
	seen := map[string]bool{}
	for _, f := range found {
		seen[f.Path] = true
	}
	var out []Found
	current := func(id string) (string, bool) {
		ms, err := h.FindThread(id)
		if err != nil || len(ms) == 0 {
			return "", false
		}
		if len(ms) == 1 {
			return ms[0].Path, true
		}
		return home.Current(ms)
	}
	add := func(f Found) {
		t := strings.ToLower(f.ThreadID)
		if _, ok := listed[t]; !ok && t != "" {
			listed[t] = len(out)
		}
		out = append(out, f)
	}
	var order []string // threads found, in order
	for _, f := range found {
		t := strings.ToLower(f.ThreadID)
		f.AttachedTo = attachedTo[t]
		if _, ok := listed[t]; !ok && t != "" && !f.Inherited {
			order = append(order, t)
		}
		add(f)
	}
	for _, t := range order {
		if p := attachedTo[t]; p != "" {
			if i, ok := listed[strings.ToLower(p)]; ok {
				if out[i].ParentOf == "" {
					out[i].ParentOf = out[listed[t]].ThreadID
				}
			} else if path, ok := current(p); ok && !seen[path] {
				seen[path] = true
				add(Found{ThreadMatch: rollout.ThreadMatch{Path: path, ThreadID: strings.ToLower(p)}, ParentOf: out[listed[t]].ThreadID, ViaAttachment: true})
			}
		}
		for _, c := range children[t] {
			cid := strings.ToLower(c.ID)
			if i, ok := listed[cid]; ok {
				if out[listed[t]].ParentOf == "" {
					out[listed[t]].ParentOf = out[i].ThreadID
				}
				continue
			}
			if path, ok := current(c.ID); ok && !seen[path] {
				seen[path] = true
				add(Found{ThreadMatch: rollout.ThreadMatch{Path: path, ThreadID: cid}, AttachedTo: c.AttachedTo, ViaAttachment: true})
			}
		}
	}
	return out
}

// ForFile indexes for a command that reads one rollout: its home, and its
// own directory, so that a fork copied next to its parent resolves.
func ForFile(path string) *Index {
	if path == rollout.StdinPath {
		return New(nil)
	}
	if objstore.IsURI(path) {
		return New([]string{path}, path[:strings.LastIndex(path, "/")+1])
	}
	return New([]string{path}, filepath.Dir(path))
}

// Expand is matches, a thread's current rollout first when it has
// several (a reverted thread), each followed by the rollouts of its
// lineage (nearest first) not listed yet: the threads' predecessors,
// looked up in the rollout directories dirs as Codex does.
func Expand(matches []rollout.ThreadMatch, dirs []string) []Found {
	paths := make([]string, 0, len(matches))
	for _, m := range matches {
		paths = append(paths, m.Path)
	}
	return ExpandIn(New(paths, dirs...), matches)
}

// ExpandIn is Expand with the lineages looked up in ix (a manifest's).
func ExpandIn(ix *Index, matches []rollout.ThreadMatch) []Found {
	seen := map[string]bool{}
	for _, m := range matches {
		seen[m.Path] = true
	}
	var out []Found
	for _, f := range currentFirst(matches) {
		out = append(out, f)
		c := ix.Resolve(f.Path)
		for i := 1; i < len(c.Links); i++ {
			r := c.Links[i]
			if seen[r.Path] {
				continue
			}
			seen[r.Path] = true
			meta, _ := r.Meta()
			child, _ := c.Links[i-1].Meta()
			out = append(out, Found{
				ThreadMatch: rollout.ThreadMatch{Path: r.Path, ThreadID: meta.ThreadID, NameID: r.Name.Thread, MetaID: meta.ThreadID},
				Inherited:   true, ContinuedBy: c.Links[i-1].ID, UpTo: child.Base.EndOffset,
			})
		}
	}
	return out
}

// currentFirst groups matches by thread, in the order the threads first
// appear, and puts the current rollout of a thread that has several
// first, marked Current.
func currentFirst(matches []rollout.ThreadMatch) []Found {
	byThread := map[string][]rollout.ThreadMatch{}
	var threads []string
	for _, m := range matches {
		t := strings.ToLower(m.ThreadID)
		if _, ok := byThread[t]; !ok {
			threads = append(threads, t)
		}
		byThread[t] = append(byThread[t], m)
	}
	out := make([]Found, 0, len(matches))
	for _, t := range threads {
		ms := byThread[t]
		cur, ok := home.Current(ms)
		if !ok || len(ms) == 1 {
			cur = ""
		}
		for _, m := range ms {
			if m.Path == cur {
				out = append(out, Found{ThreadMatch: m, Current: true})
			}
		}
		for _, m := range ms {
			if m.Path != cur {
				out = append(out, Found{ThreadMatch: m})
			}
		}
	}
	return out
}
