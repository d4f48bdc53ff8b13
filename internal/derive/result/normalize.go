package result

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/rollout-dev/rollout/checks"
)

// Normalize puts the report in the canonical order every printer expects:
// files sorted by path (files with the same path keep their relative order
// and are not merged), and in each file the findings sorted by (path, line,
// byte offset, rule, message) with exact duplicates dropped. A finding with
// an empty Path takes its file's path. Nil slices become empty slices.
// Normalize is idempotent.
func (r *Report) Normalize() {
	if r.Files == nil {
		r.Files = []FileResult{}
	}
	slices.SortStableFunc(r.Files, func(a, b FileResult) int { return strings.Compare(a.Path, b.Path) })
	for i := range r.Files {
		r.Files[i].Normalize()
	}
}

// Normalize puts one file's findings in the canonical order of
// Report.Normalize, without exact duplicates; a finding with an empty Path
// takes the file's. A Stream expects each file normalized.
func (f *FileResult) Normalize() {
	if f.Findings == nil {
		f.Findings = []checks.Finding{}
	}
	for j := range f.Findings {
		if f.Findings[j].Path == "" {
			f.Findings[j].Path = f.Path
		}
	}
	slices.SortStableFunc(f.Findings, compareFindings)
	out := f.Findings[:0]
	for j := range f.Findings {
		if j > 0 && compareFindings(out[len(out)-1], f.Findings[j]) == 0 {
			continue // exact duplicate
		}
		out = append(out, f.Findings[j])
	}
	clear(f.Findings[len(out):])
	f.Findings = out
}

// FilesOf groups findings by path into normalized files, in path order:
// the report of findings that arrive without their files (home's).
func FilesOf(findings []checks.Finding) []*FileResult {
	byPath := map[string]*FileResult{}
	var order []string
	for _, fd := range findings {
		fr := byPath[fd.Path]
		if fr == nil {
			fr = &FileResult{Path: fd.Path}
			byPath[fd.Path] = fr
			order = append(order, fd.Path)
		}
		fr.Findings = append(fr.Findings, fd)
	}
	slices.Sort(order)
	files := make([]*FileResult, len(order))
	for i, p := range order {
		files[i] = byPath[p]
		checks.SortFindings(files[i].Findings)
		files[i].Normalize()
	}
	return files
}

// compareFindings orders by the documented key (path, line, byte offset,
// rule, message), then by every other field, so that it returns 0 only for
// exact duplicates. The evidence, in canonical form, is compared last and
// only then computed: findings rarely tie that far.
func compareFindings(a, b checks.Finding) int {
	if c := cmp.Or(
		strings.Compare(a.Path, b.Path),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.ByteOffset, b.ByteOffset),
		strings.Compare(a.Rule, b.Rule),
		strings.Compare(a.Message, b.Message),
		cmp.Compare(b.Severity, a.Severity), // most severe first
		compareOrdinal(a.Ordinal, b.Ordinal),
		compareBool(a.Fixable, b.Fixable),
	); c != 0 {
		return c
	}
	return strings.Compare(evidenceKey(a.EvidenceMap()), evidenceKey(b.EvidenceMap()))
}

func compareOrdinal(a, b *int64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmp.Compare(*a, *b)
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// evidenceKey is a canonical string for an evidence map: nil and empty maps
// are equal (both print as {}), and encoding/json sorts keys at every level.
func evidenceKey(ev map[string]any) string {
	if len(ev) == 0 {
		return ""
	}
	b, err := json.Marshal(ev)
	if err != nil {
		// Not encodable (the JSON printers will report it); fmt also
		// prints maps with sorted keys.
		return fmt.Sprintf("%#v", ev)
	}
	return string(b)
}
