package checks

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/rollout-dev/rollout/reconstruct"
)

// Rule is one rule, in one value: its documentation (which feeds the SARIF
// rule list, `rollout explain` and the generated docs/checks.md) and its
// behaviour: the observation kind it consumes, the message of a finding,
// the context rule of its severity and the planner of its fix. Rules are
// declared with on, one file per area (rules_tool.go, ...), and listed in
// registry.go.
type Rule struct {
	ID       string // area/name, never changes meaning once released
	Severity Severity
	Title    string // one line: what it detects
	Doc      string // a paragraph for a support engineer: why it matters, what to do
	Since    string // release that introduced it
	Fix      string // what repair does; empty when there is no fix
	OptIn    bool   // the fix runs only when named with --fix
	// Incomplete: a finding means part of the file was not analysed, so
	// the verdict on the file is incomplete (exit 3).
	Incomplete bool

	// Kinds are the observation kinds the rule turns into findings.
	Kinds []reconstruct.Kind

	evidence reflect.Type // the evidence type of Kinds (the JSON evidence of its findings)
	message  func(reconstruct.Evidence) string
	// context, when set, is the severity of one finding in its file (the
	// rule's Severity otherwise).
	context func(reconstruct.Evidence, *reconstruct.State) Severity
	// plan, when set, plans the fix of one finding; it returns why it
	// cannot, or "". Set it exactly when Fix is documented.
	plan fixer
}

// fixer plans the fix of one finding; it returns why it cannot, or "".
type fixer func(p *planner, f Finding) string

// on completes r as the rule of the observations whose evidence is an E:
// message says a finding from its evidence.
func on[E reconstruct.Evidence](r Rule, message func(E) string) *Rule {
	var zero E
	r.Kinds = []reconstruct.Kind{zero.Kind()}
	r.evidence = reflect.TypeOf(zero)
	r.message = func(ev reconstruct.Evidence) string { return message(ev.(E)) }
	return &r
}

// severityBy makes a context rule for Rule.context from a function of the
// rule's evidence.
func severityBy[E reconstruct.Evidence](f func(E, *reconstruct.State) Severity) func(reconstruct.Evidence, *reconstruct.State) Severity {
	return func(ev reconstruct.Evidence, st *reconstruct.State) Severity { return f(ev.(E), st) }
}

// withEvidence makes a fixer for Rule.plan from one that reads the rule's
// evidence.
func withEvidence[E reconstruct.Evidence](f func(*planner, Finding, E) string) fixer {
	return func(p *planner, fd Finding) string { return f(p, fd, fd.Facts.(E)) }
}

// Fixable reports whether repair has a fix for the rule.
func (r *Rule) Fixable() bool { return r.plan != nil }

// Area is the part of the id before the slash ("ordinal" for "ordinal/gap").
func (r *Rule) Area() string {
	area, _, _ := strings.Cut(r.ID, "/")
	return area
}

// EvidenceFields lists the keys of the JSON evidence of the rule's
// findings, in declaration order.
func (r *Rule) EvidenceFields() []string {
	var out []string
	for i := 0; i < r.evidence.NumField(); i++ {
		if name, _, _ := strings.Cut(r.evidence.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// severityOf is the severity of a finding of the rule.
func (r *Rule) severityOf(ev reconstruct.Evidence, st *reconstruct.State) Severity {
	if r.context != nil {
		return r.context(ev, st)
	}
	return r.Severity
}

// Rules returns every registered rule sorted by id.
func Rules() []*Rule {
	out := make([]*Rule, len(registry))
	copy(out, registry)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Lookup finds a rule by its exact id.
func Lookup(id string) (*Rule, bool) {
	r, ok := byID[id]
	return r, ok
}

// HasFixer reports whether repair can fix findings of a rule.
func HasFixer(rule string) bool {
	r, ok := byID[rule]
	return ok && r.Fixable()
}

// The indexes of the registry, computed from it.
var (
	byID       = indexIDs(registry)
	ruleOfKind = indexKinds(registry)
)

func indexIDs(rules []*Rule) map[string]*Rule {
	m := make(map[string]*Rule, len(rules))
	for _, r := range rules {
		if _, dup := m[r.ID]; dup {
			panic("rule " + r.ID + " registered twice")
		}
		m[r.ID] = r
	}
	return m
}

func indexKinds(rules []*Rule) map[reconstruct.Kind]*Rule {
	m := map[reconstruct.Kind]*Rule{}
	for _, r := range rules {
		for _, k := range r.Kinds {
			if other, dup := m[k]; dup {
				panic(fmt.Sprintf("observation kind %d consumed by %s and %s", k, other.ID, r.ID))
			}
			m[k] = r
		}
	}
	return m
}

// evidenceJSON is the public "evidence" object of a finding: the fields of
// its evidence struct under their JSON names (omitempty honoured), values
// as they are, so every printer sees the same numbers.
func evidenceJSON(ev reconstruct.Evidence) map[string]any {
	m := map[string]any{}
	v := reflect.ValueOf(ev)
	for i := 0; i < v.NumField(); i++ {
		name, opts, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		f := v.Field(i)
		if opts == "omitempty" && f.IsZero() {
			continue
		}
		if f.Kind() == reflect.Pointer { // a value that may be absent
			if f.IsNil() {
				m[name] = nil
				continue
			}
			f = f.Elem()
		}
		m[name] = f.Interface()
	}
	return m
}

// inThisFile adds the count of a fact reported once per file.
func inThisFile(msg string, n int) string { return fmt.Sprintf("%s (%d in this file)", msg, n) }
