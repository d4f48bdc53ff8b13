// Package forest groups rollouts into trees by the one parent each names:
// a sub-agent names the thread that spawned it
// (session_meta.source.subagent.thread_spawn.parent_thread_id), and a fork
// or revert names the rollout whose history it continues
// (session_meta.history_base). It is the first package of the Codex-home
// read side (internal/codex) and imports none of the module: callers take
// the links from what reconstruct, space or reclaim read, and ask which tree
// each rollout belongs to. simulate-budget --ledger (threads sharing a
// ledger), reclaim (a tree is reclaimed together or not at all) and space
// (the size of each tree) all group through it.
//
// The rules follow Codex's thread_spawn_edges table and its traversal
// (codex-rs/state/src/runtime/threads.rs, openai/codex as of rust-v0.147.0,
// commit 8057603d0c "list descendant threads by ancestor"):
//
//   - A node has at most one parent. The table's key is child_thread_id and
//     an edge taken from a rollout's source is inserted only if absent
//     (insert_thread_spawn_edge_if_absent), so when two inputs claim the
//     same id, the first one is the node and the others only follow their
//     own parent link.
//   - Links may form a cycle (nothing stops one: Codex's own test
//     list_threads_by_relation_filters_spawn_graph_with_keyset_pagination
//     closes one and requires that the descendant listing "should
//     terminate"). Codex walks the graph as a set (UNION, not UNION ALL):
//     every thread is visited once, and a thread reached again ends the
//     walk. So the members of a cycle are one tree, each a descendant of
//     the others; the tree is rooted at the member with the least id, so
//     the root does not depend on the order of the inputs.
//   - Forks by forked_from_id are not spawn edges: SessionSource's
//     parent_thread_id (codex-rs/protocol/src/protocol.rs) is set only for
//     SubAgent(ThreadSpawn). Which link a caller passes is its choice.
//   - An attached thread (a side conversation, Codex 0.171: a fork made
//     with thread/fork's attachToSource) has one parent too, in
//     threads.attached_thread_parent_id and in its session_meta
//     (attached_thread, forked_from_id); space passes it for a file that
//     names no spawning parent.
package forest

// Node is one input: its id ("" when unknown) and the id of the one parent
// it names ("" for none).
type Node struct {
	ID     string
	Parent string
}

// Forest is a set of nodes grouped into trees.
type Forest struct {
	nodes []Node
	root  []int  // index of each node's root
	cycle []bool // the node's tree is topped by a cycle of links
}

// New groups nodes into trees. A node's root is its topmost ancestor among
// the nodes: the node itself when the parent it names is not among them.
func New(nodes []Node) *Forest {
	f := &Forest{nodes: nodes, root: make([]int, len(nodes)), cycle: make([]bool, len(nodes))}
	byID := make(map[string]int, len(nodes))
	for i, n := range nodes {
		if _, dup := byID[n.ID]; n.ID != "" && !dup {
			byID[n.ID] = i
		}
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]uint8, len(nodes))
	var path []int
	for i := range nodes {
		if state[i] == done {
			continue
		}
		// Up the parent links, each node once; a node reached again on
		// this walk closes a cycle.
		path = path[:0]
		j, r, cyc := i, -1, false
		for {
			if state[j] == done {
				r, cyc = f.root[j], f.cycle[j]
				break
			}
			if state[j] == onPath {
				k := len(path) - 1
				for path[k] != j {
					k--
				}
				r, cyc = path[k], true
				for _, m := range path[k:] {
					if nodes[m].ID < nodes[r].ID {
						r = m
					}
				}
				break
			}
			state[j] = onPath
			path = append(path, j)
			p, ok := byID[nodes[j].Parent]
			if nodes[j].Parent == "" || !ok {
				r = j
				break
			}
			j = p
		}
		for _, m := range path {
			f.root[m], f.cycle[m], state[m] = r, cyc, done
		}
	}
	return f
}

// Len is the number of nodes.
func (f *Forest) Len() int { return len(f.nodes) }

// Root is the index of node i's root.
func (f *Forest) Root(i int) int { return f.root[i] }

// Cycle reports whether node i's tree is topped by a cycle of links (its
// root is then the member of the cycle with the least id).
func (f *Forest) Cycle(i int) bool { return f.cycle[i] }

// Absent is the parent that node i's root names but that is not among the
// nodes ("" when the root names none, or i's tree is a cycle): the rollout
// a sub-agent's parent or a fork's source lies in, which was not read.
func (f *Forest) Absent(i int) string {
	r := f.root[i]
	if f.cycle[i] {
		return ""
	}
	return f.nodes[r].Parent
}

// Top is the id that tops node i's tree: the absent parent its root names
// when there is one, else the root's id. Nodes whose roots are siblings
// under one absent parent share a Top, and so do copies of one id.
func (f *Forest) Top(i int) string {
	if a := f.Absent(i); a != "" {
		return a
	}
	return f.nodes[f.root[i]].ID
}

// Trees are the node indexes grouped by root, each in input order, the
// trees in the order of their first node.
func (f *Forest) Trees() [][]int {
	at := map[int]int{} // root -> index into out
	var out [][]int
	for i := range f.nodes {
		r := f.root[i]
		k, ok := at[r]
		if !ok {
			k = len(out)
			at[r] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], i)
	}
	return out
}
