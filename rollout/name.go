package rollout

import (
	"path/filepath"
	"strings"
)

// Name is what a Codex rollout file name says: the thread it belongs to and
// the rollout it is. An ordinary rollout is named
// rollout-YYYY-MM-DDThh-mm-ss-<thread>.jsonl[.zst] and its rollout id is its
// thread id; a reverted thread gets a new file per revert,
// rollout-YYYY-MM-DDThh-mm-ss-<thread>_<rollout>.jsonl, whose thread id
// stays that of the thread (RolloutFileName::parse and render,
// codex-rs/rollout/src/rollout_file_name.rs, openai/codex 4ef836f883
// "Distinguish rollout IDs from thread IDs", #38127).
type Name struct {
	Thread  string // lower case
	Rollout string // lower case; Thread unless the name carries _<rollout>
}

// Reverted reports whether the name carries a rollout id of its own.
func (n Name) Reverted() bool { return n.Rollout != n.Thread }

// ParseName reads the ids from a rollout file name (any directory, .zst or
// not). Like Codex it splits the ids at the first '_' after the time stamp;
// a name whose time stamp is not Codex's form is read from the right, so
// renamed copies (rollout-x-<uuid>.jsonl) still name their thread. ok is
// false when the name carries no id.
func ParseName(path string) (Name, bool) {
	name := filepath.Base(path)
	name = strings.TrimSuffix(name, ".zst")
	name = strings.TrimSuffix(name, ".jsonl")
	if core, ok := strings.CutPrefix(name, "rollout-"); ok && len(core) > 20 && core[19] == '-' {
		ids := core[20:]
		thread, rollout, reverted := strings.Cut(ids, "_")
		if !reverted {
			rollout = thread
		}
		if isUUID(thread) && isUUID(rollout) {
			return Name{strings.ToLower(thread), strings.ToLower(rollout)}, true
		}
	}
	const n = 36
	if len(name) < n || !isUUID(name[len(name)-n:]) {
		return Name{}, false
	}
	last := strings.ToLower(name[len(name)-n:])
	if len(name) >= 2*n+1 && name[len(name)-n-1] == '_' && isUUID(name[len(name)-2*n-1:len(name)-n-1]) {
		return Name{strings.ToLower(name[len(name)-2*n-1 : len(name)-n-1]), last}, true
	}
	return Name{last, last}, true
}

// ThreadIDFromName is the thread id a rollout file name carries (see
// ParseName): for a reverted thread's file, the part before the '_'.
func ThreadIDFromName(path string) (id string, ok bool) {
	n, ok := ParseName(path)
	return n.Thread, ok
}

// RolloutIDFromName is the rollout id a file name carries: the id a fork's
// or revert's session_meta.history_base.thread_id names (see ParseName).
func RolloutIDFromName(path string) (id string, ok bool) {
	n, ok := ParseName(path)
	return n.Rollout, ok
}
