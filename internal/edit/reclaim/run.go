package reclaim

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/rollout-dev/rollout/internal/codex/forest"
)

// Outcome is what Run did, or would do, to one file.
type Outcome struct {
	Path   string
	Plan   *Plan   // nil: the file could not be planned (Err says why)
	Result *Result // nil: it was not prepared
	// Err is why planning, preparing or committing the file failed.
	Err error
	// Refused says why the file is not written: its proof failed, or that
	// of another file of its thread tree ("": not refused).
	Refused string
}

// PlanFailed reports whether the file could not even be planned (so
// nothing of it was prepared), as opposed to failing to prepare or commit.
func (o *Outcome) PlanFailed() bool { return o.Err != nil && o.Plan == nil }

// Run plans, prepares and proves every file, and with write commits them.
// A parent thread and its sub-agents among the inputs (one tree of package
// forest) are reclaimed together or not at all: when one file of a tree
// could not be prepared or was refused, none of the tree is written.
// Outcomes are in the order of paths.
func Run(paths []string, o Options, write bool) []*Outcome {
	out := make([]*Outcome, len(paths))
	plans := make([]*Plan, len(paths))
	reasons := skipReasons{}
	for i, p := range paths {
		out[i] = &Outcome{Path: p}
		plan, _, err := PlanFile(p, o)
		if o.Planned != nil {
			o.Planned(p)
		}
		if err != nil {
			out[i].Err = err
			continue
		}
		plan.Skipped = reasons.shared(plan.Skipped)
		plans[i], out[i].Plan = plan, plan
	}
	for _, tree := range trees(plans) {
		pend := map[int]*Pending{}
		refused := ""
		for _, i := range tree {
			pd, err := Prepare(plans[i], o, write)
			if o.Proved != nil {
				o.Proved(paths[i])
			}
			if err != nil {
				out[i].Err = err
				refused = fmt.Sprintf("%s could not be prepared", paths[i])
				continue
			}
			pend[i], out[i].Result = pd, pd.Result
			if pd.Result.Refused() {
				out[i].Refused = "resume would differ"
				refused = fmt.Sprintf("%s was refused", paths[i])
			}
		}
		for _, i := range tree {
			if pend[i] == nil {
				continue
			}
			if refused != "" && out[i].Refused == "" && out[i].Err == nil {
				out[i].Refused = "its thread tree is reclaimed together, and " + refused
			}
			if write && refused == "" {
				if err := pend[i].Commit(); err != nil {
					out[i].Err = err
				}
			}
			pend[i].Discard()
		}
	}
	return out
}

// skipReasons are the distinct Skipped maps of a run's plans, by their
// content: most files of a home are skipped for the same reasons, and a
// map per file was the largest part of a run's memory at 50,000 files.
type skipReasons map[string]map[string]string

func (sr skipReasons) shared(m map[string]string) map[string]string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys { // lengths first: no text poses as two
		b = append(strconv.AppendInt(b, int64(len(k)), 10), ':')
		b = append(b, k...)
		b = append(strconv.AppendInt(b, int64(len(m[k])), 10), ':')
		b = append(b, m[k]...)
	}
	if have, ok := sr[string(b)]; ok {
		return have
	}
	sr[string(b)] = m
	return m
}

// trees groups the indexes of the plans by their tree among the inputs
// (files that could not be planned are in none).
func trees(plans []*Plan) [][]int {
	nodes := make([]forest.Node, len(plans))
	for i, p := range plans {
		if p != nil {
			nodes[i] = forest.Node{ID: p.ThreadID, Parent: p.Parent}
		}
	}
	var out [][]int
	for _, tree := range forest.New(nodes).Trees() {
		if plans[tree[0]] != nil {
			out = append(out, tree)
		}
	}
	return out
}
