package budget

import (
	"cmp"
	"slices"
)

// A shared ledger: Codex charges a root thread and the sub-agents it
// spawns to one budget. Their rollouts are separate files, linked by
// session_meta (a sub-agent names its parent thread). shareLedger replays
// the requests of one such group in the order they were made (their
// token_count timestamps) against one ledger and finds the request that
// exhausts it; every thread then stops there, as an exhausted ledger
// aborts the running turns.

// SharedLedger names the exhaustion of a ledger shared by several
// threads, as each of them reports it.
type SharedLedger struct {
	ThreadID string `json:"thread_id"` // the thread whose request exhausted it
	Path     string `json:"path"`      // its rollout
	Request  int    `json:"request"`   // that request, 1-based in its thread
	// StoppedAfter is how many of this thread's own requests happened
	// before the ledger ran out.
	StoppedAfter int `json:"stopped_after"`
}

// LedgerExhaustion is one exhausted shared ledger of a fleet.
type LedgerExhaustion struct {
	Window   int64  `json:"window"` // the setting (0: each rollout's recorded window)
	RootPath string `json:"root_path"`
	Threads  int    `json:"threads"`
	ThreadID string `json:"thread_id"`
	Path     string `json:"path"`
	Request  int    `json:"request"`
	Charged  int64  `json:"charged"` // the charged total at exhaustion, rounded down
}

// shareLedger charges the requests of a group of threads (evs[0] is the
// root; the order of the rest does not matter) to one ledger of s.Ledger
// tokens in request-time order (ties: the order of evs, then request
// order). It returns, per thread, the settings to simulate it with: no
// own ledger, and when the shared one runs out, Stop and Shared set. The
// exhaustion is nil when the ledger lasts.
func shareLedger(evs []*Evidence, s Settings) ([]Settings, *LedgerExhaustion) {
	type charge struct {
		at          int64
		thread, req int
	}
	var all []charge
	for t, ev := range evs {
		for i, r := range ev.Requests {
			all = append(all, charge{r.At, t, i})
		}
	}
	slices.SortFunc(all, func(a, b charge) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.thread, b.thread), cmp.Compare(a.req, b.req))
	})
	out := make([]Settings, len(evs))
	for i := range out {
		out[i] = s
		out[i].Ledger = 0
	}
	if s.Ledger <= 0 {
		return out, nil
	}
	var total float64
	for k, c := range all {
		r := evs[c.thread].Requests[c.req]
		total += s.WeightOutput*float64(r.Output) + s.WeightInput*float64(max(0, r.Input-r.Cached))
		if total < float64(s.Ledger) {
			continue
		}
		ex := &LedgerExhaustion{RootPath: evs[0].Path, Threads: len(evs), ThreadID: evs[c.thread].ThreadID,
			Path: evs[c.thread].Path, Request: c.req + 1, Charged: int64(total)}
		kept := make([]int, len(evs))
		for _, d := range all[:k+1] {
			kept[d.thread]++
		}
		for i := range out {
			n := kept[i]
			out[i].Stop = &n
			out[i].Shared = &SharedLedger{ThreadID: ex.ThreadID, Path: ex.Path, Request: ex.Request, StoppedAfter: n}
		}
		return out, ex
	}
	return out, nil
}
