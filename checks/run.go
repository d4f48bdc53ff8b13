package checks

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// DefaultMaxFindingsPerRule is verify's --max-findings-per-rule.
const DefaultMaxFindingsPerRule = 1000

// Options configure the analysis of one file: the replay it rides on and
// the rule layer.
type Options struct {
	MaxLineBytes int64
	// MaxFindingsPerRule keeps, per rule, the first findings in full and
	// counts the rest in one summary finding (0: keep all). Memory then
	// follows the state, not the number of bad lines.
	MaxFindingsPerRule int
	// HandoffCap is the cap of the handoff budget (0: the default, 16000).
	HandoffCap int64
	// Now is when the file is judged (liveness of an open last turn); zero:
	// unknown, so an unanswered call of the open turn counts as in progress.
	Now time.Time
	// MigrationLimit overrides the 16 MiB record limit of Codex's paginated
	// migration (tests only; 0: the default).
	MigrationLimit int64
	// Force reads a file whose first line is not a JSON object.
	Force bool
	// OnRead, when set, is told how many bytes of the file were read.
	OnRead func(n int)
	// HashItems, ReplayGlued: see reconstruct.Options.
	HashItems, ReplayGlued bool
	// Lineage, when set, resolves the lineage of the file replayed: the
	// rollouts it continues are replayed first (lineage.Index.Ancestry).
	Lineage func(path string) *reconstruct.Ancestry
}

// replay is the replay these options describe, of the file at path.
func (o Options) replay(path string) reconstruct.ReplayOptions {
	ro := reconstruct.ReplayOptions{
		Options:      reconstruct.Options{HandoffCap: o.HandoffCap, Now: o.Now, MigrationLimit: o.MigrationLimit, HashItems: o.HashItems, ReplayGlued: o.ReplayGlued},
		Open:         rollout.OpenOptions{Force: o.Force, OnRead: o.OnRead},
		MaxLineBytes: o.MaxLineBytes,
	}
	if o.Lineage != nil {
		ro.Ancestry = func() *reconstruct.Ancestry { return o.Lineage(path) }
	}
	return ro
}

// Result is what the analysis of one file found.
type Result struct {
	Path     string
	Records  int
	State    *reconstruct.State
	Findings []Finding
}

// Run replays one rollout ("-": stdin) with the rule layer as one observer,
// next to any others (the budget evidence, the fix facts, ...).
func Run(path string, stdin io.Reader, opts Options, observers ...reconstruct.Observer) (*Result, error) {
	c := NewChecker(path, opts.MaxFindingsPerRule)
	st, err := reconstruct.ReplayFile(path, stdin, opts.replay(path), append(observers, c.Observe)...)
	return result(c, st, err)
}

// result is the Result of a replay; one that failed part-way (a
// *reconstruct.ReadError) still has the findings of what was read.
func result(c *Checker, st *reconstruct.State, err error) (*Result, error) {
	if st == nil {
		return nil, err
	}
	return c.Result(st), err
}

// RunReader is Run over an open stream named path.
func RunReader(path string, r io.Reader, opts Options, observers ...reconstruct.Observer) (*Result, error) {
	c := NewChecker(path, opts.MaxFindingsPerRule)
	ro := opts.replay(path)
	ro.Path = path
	st, err := reconstruct.Replay(r, ro, append(observers, c.Observe)...)
	return result(c, st, err)
}

// Checker is the rule layer as an observer of a replay: it keeps the
// observations some rule consumes and judges them once the file is read
// (severities can depend on the whole file: its era, its history mode).
type Checker struct {
	path string
	// obs are the observations kept, in blocks: a million findings are
	// never copied (nor their pointers barriered) as one slice grows.
	obs  [][]reconstruct.Observation
	nobs int
	max  int                  // per rule; 0: no limit
	kept map[string]int       // observations kept per rule
	over map[string]*overflow // per rule, what was only counted

	uniform bool // every block of obs holds obsBlock observations (Analysis)
}

// NewChecker returns the checker of the file at path; maxPerRule as
// Options.MaxFindingsPerRule.
func NewChecker(path string, maxPerRule int) *Checker {
	return &Checker{path: path, max: maxPerRule}
}

// Result is the analysis once the replay has finished with state st. It
// is called once: the observations are let go as their findings are made.
func (c *Checker) Result(st *reconstruct.State) *Result {
	return &Result{Path: c.path, Records: st.Records, State: st, Findings: c.Findings(st)}
}

// overflow is what is left of the findings of a rule past the limit: how
// many, and the last one.
type overflow struct {
	n    int
	last reconstruct.Observation
}

// Observe takes one observation of the replay.
func (c *Checker) Observe(o reconstruct.Observation) {
	r := ruleOfKind[o.Kind()]
	if r == nil {
		return
	}
	if c.max > 0 {
		if c.kept == nil {
			c.kept, c.over = map[string]int{}, map[string]*overflow{}
		}
		if c.kept[r.ID] >= c.max {
			ov := c.over[r.ID]
			if ov == nil {
				ov = &overflow{}
				c.over[r.ID] = ov
			}
			ov.n++
			ov.last = o
			return
		}
		c.kept[r.ID]++
	}
	if n := len(c.obs); n == 0 || len(c.obs[n-1]) == cap(c.obs[n-1]) {
		// Small first (most files have few findings), then obsBlock each;
		// an Analysis indexes them, so its blocks are all obsBlock.
		size := min(obsBlock, 16<<min(n, 8))
		if c.uniform {
			size = obsBlock
		}
		c.obs = append(c.obs, make([]reconstruct.Observation, 0, size))
	}
	b := &c.obs[len(c.obs)-1]
	*b = append(*b, o)
	c.nobs++
}

// obsBlock is the most observations in a block of Checker.obs.
const obsBlock = 4096

// Findings turns the observations into findings, sorted, once the whole
// file, and so its era and history mode, are known. It is called once:
// each block of observations is let go once its findings are made.
func (c *Checker) Findings(st *reconstruct.State) []Finding {
	out := make([]Finding, 0, c.nobs+len(c.over))
	for i, block := range c.obs {
		c.obs[i] = nil // the block is garbage once its findings are made
		for _, o := range block {
			r := ruleOfKind[o.Kind()]
			out = append(out, Finding{
				Rule: r.ID, Severity: r.severityOf(o.Evidence, st), Path: c.path,
				Line: o.Pos.Line, ByteOffset: o.Pos.Offset, Ordinal: o.Pos.Ordinal,
				Message: r.message(o.Evidence), Fixable: r.Fixable(), Incomplete: r.Incomplete,
				Facts: o.Evidence,
			})
		}
	}
	for rule, ov := range c.over {
		r, _ := Lookup(rule)
		out = append(out, Finding{
			Rule: r.ID, Severity: r.severityOf(ov.last.Evidence, st), Path: c.path,
			Line: ov.last.Pos.Line, ByteOffset: ov.last.Pos.Offset, Ordinal: ov.last.Pos.Ordinal,
			Message: fmt.Sprintf("%d more %s findings not listed (only the first %d are; see --max-findings-per-rule), the last on line %d",
				ov.n, r.ID, c.max, ov.last.Pos.Line),
			Incomplete: r.Incomplete,
			Facts:      ov.last.Evidence, // the last one's
			Evidence:   map[string]any{"omitted": ov.n, "limit": c.max},
		})
	}
	SortFindings(out)
	return out
}

// Represents is how many findings f stands for: 1, or for the summary of
// a rule's findings past --max-findings-per-rule, how many it counts.
func (f Finding) Represents() int {
	if n, ok := f.Evidence["omitted"].(int); ok && f.Evidence["limit"] != nil {
		return n
	}
	return 1
}

// SortFindings orders findings by (path, line, offset, rule, message).
func SortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := &fs[i], &fs[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.ByteOffset != b.ByteOffset {
			return a.ByteOffset < b.ByteOffset
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
}

// Filter keeps the findings of selected rules. A selector is a rule id or an
// area prefix ending in "/" ("ordinal/").
type Filter struct {
	sel, ign []string
}

// NewFilter validates the selectors against the registry.
func NewFilter(selected, ignored []string) (Filter, error) {
	for i, list := range [][]string{selected, ignored} {
		for _, s := range list {
			if !matchesAny(s) {
				return Filter{}, unknownRule(s, []string{"--select", "--ignore"}[i])
			}
		}
	}
	return Filter{sel: selected, ign: ignored}, nil
}

func matchesAny(sel string) bool {
	for _, r := range registry {
		if selects(sel, r.ID) {
			return true
		}
	}
	return false
}

func selects(sel, id string) bool {
	if strings.HasSuffix(sel, "/") {
		return strings.HasPrefix(id, sel)
	}
	return sel == id || strings.HasPrefix(id, sel+"/")
}

// Keep reports whether findings of a rule pass the filter.
func (f Filter) Keep(rule string) bool {
	if len(f.sel) > 0 {
		ok := false
		for _, s := range f.sel {
			if selects(s, rule) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, s := range f.ign {
		if selects(s, rule) {
			return false
		}
	}
	return true
}

// Analysis is a Result whose findings are made on demand: repair plans
// from every finding of a file, a million of them, and keeps those its
// plan leaves. Made all at once, the findings would be held beside the
// observations they come from.
type Analysis struct {
	Path    string
	Records int
	State   *reconstruct.State
	obs     [][]reconstruct.Observation // in blocks of obsBlock, as observed
	perm    []int32                     // the order SortFindings gives their findings (nil: as observed)
	n       int
	all     []Finding // instead, when some rule's findings were counted past a limit
	path    string
}

// ob is observation k, in the order observed.
func (a *Analysis) ob(k int) *reconstruct.Observation { return &a.obs[k/obsBlock][k%obsBlock] }

// at is the observation of finding i.
func (a *Analysis) at(i int) *reconstruct.Observation {
	if a.perm != nil {
		return a.ob(int(a.perm[i]))
	}
	return a.ob(i)
}

// RunReaderAnalysis is RunReader with findings made on demand.
func RunReaderAnalysis(path string, r io.Reader, opts Options, observers ...reconstruct.Observer) (*Analysis, error) {
	c := NewChecker(path, opts.MaxFindingsPerRule)
	c.uniform = true
	ro := opts.replay(path)
	ro.Path = path
	st, err := reconstruct.Replay(r, ro, append(observers, c.Observe)...)
	if st == nil {
		return nil, err
	}
	a := &Analysis{Path: path, Records: st.Records, State: st, path: path}
	if len(c.over) > 0 {
		a.all = c.Findings(st)
		return a, err
	}
	a.obs, a.n = c.obs, c.nobs
	// SortFindings' order: line, offset, rule, message (made for ties
	// only). The observations mostly come in order: sorted only if not,
	// through 4 bytes of index each, never moved.
	less := func(x, y *reconstruct.Observation) bool {
		if x.Pos.Line != y.Pos.Line {
			return x.Pos.Line < y.Pos.Line
		}
		if x.Pos.Offset != y.Pos.Offset {
			return x.Pos.Offset < y.Pos.Offset
		}
		rx, ry := ruleOfKind[x.Kind()], ruleOfKind[y.Kind()]
		if rx.ID != ry.ID {
			return rx.ID < ry.ID
		}
		return rx.message(x.Evidence) < ry.message(y.Evidence)
	}
	for k := 1; k < a.n; k++ {
		if less(a.ob(k), a.ob(k-1)) {
			a.perm = make([]int32, a.n)
			for i := range a.perm {
				a.perm[i] = int32(i)
			}
			sort.SliceStable(a.perm, func(i, j int) bool { return less(a.ob(int(a.perm[i])), a.ob(int(a.perm[j]))) })
			break
		}
	}
	return a, err
}

// Len is the number of findings.
func (a *Analysis) Len() int {
	if a.all != nil {
		return len(a.all)
	}
	return a.n
}

// At is finding i, in SortFindings' order, made without its message.
func (a *Analysis) At(i int) Finding {
	if a.all != nil {
		return a.all[i]
	}
	o := a.at(i)
	r := ruleOfKind[o.Kind()]
	return Finding{ // its Message is made by Findings
		Rule: r.ID, Severity: r.severityOf(o.Evidence, a.State), Path: a.path,
		Line: o.Pos.Line, ByteOffset: o.Pos.Offset, Ordinal: o.Pos.Ordinal,
		Fixable: r.Fixable(), Incomplete: r.Incomplete,
		Facts: o.Evidence,
	}
}

// Findings makes, in order and with their messages, the findings keep
// accepts (by index).
func (a *Analysis) Findings(keep func(i int) bool) []Finding {
	n := 0
	for i := range a.Len() {
		if keep(i) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]Finding, 0, n)
	for i := range a.Len() {
		if keep(i) {
			f := a.At(i)
			if a.all == nil {
				f.Message = ruleOfKind[a.at(i).Kind()].message(f.Facts)
			}
			out = append(out, f)
		}
	}
	return out
}
