package report

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/derive/stateview"
	"github.com/rollout-dev/rollout/internal/edit/reclaim"
	"github.com/rollout-dev/rollout/internal/output/schema"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
)

// reclaimReport is the JSON report of `rollout reclaim`.
type reclaimReport struct {
	schema.Header
	DryRun   bool           `json:"dry_run"`
	Policies []string       `json:"policies"`
	Files    []*reclaimFile `json:"files"`
}

// reclaimFile is one file's outcome.
type reclaimFile struct {
	Path           string             `json:"path"`
	ThreadID       string             `json:"thread_id"`
	OutPath        string             `json:"out_path"`
	Archive        string             `json:"archive"`
	BytesBefore    int64              `json:"bytes_before"`
	BytesAfter     int64              `json:"bytes_after"`
	ArchiveBytes   int64              `json:"archive_bytes"`
	Freed          int64              `json:"freed"`
	Cuts           map[string]int     `json:"cuts"`
	Frees          map[string]int64   `json:"frees"`
	Skipped        map[string]string  `json:"skipped"`
	Blocked        string             `json:"blocked,omitempty"`
	StateIdentical bool               `json:"resume_state_identical"`
	StateDiff      []stateview.Change `json:"state_diff"`   // [] when identical
	NewFindings    []jsonFinding      `json:"new_findings"` // verify's finding objects
	Refused        string             `json:"refused,omitempty"`
	Written        bool               `json:"written"`
	Late           *lateBytes         `json:"late,omitempty"`
	Error          string             `json:"error,omitempty"`
	// Projection is Codex's history projection of the thread the cuts
	// invalidate: --write deletes it (and keeps its rows for --undo).
	Projection *reclaimProjection `json:"projection,omitempty"`
}

type reclaimProjection struct {
	ThreadID string `json:"thread_id"`
	DB       string `json:"db"`
	Cursor   int64  `json:"cursor"`
	From     int64  `json:"from"`
	Items    int    `json:"items"`
	Turns    int    `json:"turns"`
	Deleted  bool   `json:"deleted"`
}

// lateBytes is what an agent appended while the file was replaced: not in
// the new file, kept in KeptIn.
type lateBytes struct {
	Bytes  int64  `json:"bytes"`
	KeptIn string `json:"kept_in"`
}

func newReclaimFile(o *reclaim.Outcome) *reclaimFile {
	f := &reclaimFile{Path: o.Path, Cuts: map[string]int{}, Frees: map[string]int64{}, Skipped: map[string]string{},
		StateDiff: []stateview.Change{}, NewFindings: []jsonFinding{}, Refused: o.Refused}
	if o.Err != nil {
		f.Error = o.Err.Error()
	}
	if p := o.Plan; p != nil {
		f.ThreadID, f.BytesBefore, f.BytesAfter = p.ThreadID, p.DiskBytes, p.DiskBytes
		f.OutPath, f.Archive, f.Blocked = p.OutPath(), reclaim.ArchivePath(p.Path), p.Blocked
		for _, c := range p.Cuts {
			f.Cuts[c.Policy]++
		}
		for k, v := range p.Frees {
			f.Frees[k] = v
		}
		for k, v := range p.Skipped {
			f.Skipped[k] = v
		}
		if p.Compress {
			f.Cuts[space.PolicyCompress] = 1
		}
	}
	if r := o.Result; r != nil {
		f.BytesAfter, f.ArchiveBytes = r.BytesAfter, r.ArchiveBytes
		f.Freed = f.BytesBefore - r.BytesAfter
		f.StateIdentical = r.Identical
		f.StateDiff = append(f.StateDiff, r.StateChanges...)
		for i := range r.NewFindings {
			f.NewFindings = append(f.NewFindings, newJSONFinding(&r.NewFindings[i]))
		}
		f.Written = r.Written
		if pp := r.Projection; pp != nil {
			f.Projection = &reclaimProjection{ThreadID: pp.ThreadID, DB: pp.DB, Cursor: pp.Cursor, From: pp.From, Items: pp.Items, Turns: pp.Turns, Deleted: pp.Deleted}
		}
		if l := r.Late; l != nil {
			f.Late = &lateBytes{Bytes: l.Bytes, KeptIn: l.Kept}
		}
	}
	return f
}

func newReclaimFiles(outcomes []*reclaim.Outcome) []*reclaimFile {
	files := make([]*reclaimFile, len(outcomes))
	for i, o := range outcomes {
		files[i] = newReclaimFile(o)
	}
	return files
}

// WriteReclaimJSON writes the JSON report of `rollout reclaim`.
func WriteReclaimJSON(w io.Writer, outcomes []*reclaim.Outcome, policies []string, write bool) error {
	return writeTerminalJSON(w, reclaimReport{schema.NewHeader(schema.Reclaim), !write, policies, newReclaimFiles(outcomes)})
}

// WriteReclaimText writes the text report of `rollout reclaim`: a line per
// file with its verdict, what each policy cuts, how the state would differ
// and the new findings, then the totals.
func WriteReclaimText(w io.Writer, outcomes []*reclaim.Outcome, write bool) error {
	ew := &ErrWriter{W: w}
	var before, after, archived int64
	written, refused := 0, 0
	for _, o := range outcomes {
		f := newReclaimFile(o) // one at a time: a run over a home has a file per rollout
		if f.Error != "" {
			fmt.Fprintf(ew, "%s: error: %s\n", termsafe.String(f.Path), termsafe.String(f.Error))
			continue
		}
		before += f.BytesBefore
		after += f.BytesAfter
		archived += f.ArchiveBytes
		verdict := "resume state identical"
		switch {
		case f.Refused != "" && !f.StateIdentical:
			verdict = "REFUSED: resume state would differ"
		case f.Refused != "" && len(f.NewFindings) > 0:
			verdict = "REFUSED: the new file would have findings the old one has not"
		case f.Refused != "":
			verdict = "REFUSED: " + termsafe.String(f.Refused)
		}
		if f.Refused != "" {
			refused++
		}
		if f.Written {
			written++
		}
		path := termsafe.String(f.Path)
		if f.Blocked != "" {
			fmt.Fprintf(ew, "%s: skipped: %s\n", path, termsafe.String(f.Blocked))
			continue
		}
		if len(f.Cuts) == 0 {
			fmt.Fprintf(ew, "%s: nothing to reclaim\n", path)
		} else {
			fmt.Fprintf(ew, "%s: %s -> %s (+ %s archive), frees %s; %s\n", path, Size(f.BytesBefore), Size(f.BytesAfter), Size(f.ArchiveBytes), Size(f.Freed), verdict)
		}
		for _, p := range reclaim.Policies {
			if n := f.Cuts[p]; n > 0 {
				what := fmt.Sprintf("%d ranges", n)
				if p == space.PolicyCompress {
					what = "-> " + termsafe.String(f.OutPath)
				}
				fmt.Fprintf(ew, "  %-24s %s\n", p, what)
			}
			if why, ok := f.Skipped[p]; ok {
				fmt.Fprintf(ew, "  %-24s skipped: %s\n", p, termsafe.String(why))
			}
		}
		if len(f.StateDiff) > 0 {
			fmt.Fprintf(ew, "  resume state would differ (- only in the old file, + only in the new):\n")
			for _, c := range f.StateDiff {
				fmt.Fprintf(ew, "    %s\n", changeLine(c))
			}
		}
		for _, nf := range f.NewFindings {
			fmt.Fprintf(ew, "  new finding: line %d: %s [%s]\n", nf.Line, termsafe.String(nf.Message), nf.Rule)
		}
		if pp := f.Projection; pp != nil {
			if pp.Deleted {
				fmt.Fprintf(ew, "  deleted Codex's projection of thread %s (%d items, %d turns) from %s: Codex projects it again from the file; reclaim --undo puts it back\n",
					pp.ThreadID, pp.Items, pp.Turns, termsafe.String(pp.DB))
			} else if f.Refused == "" && f.Error == "" {
				fmt.Fprintf(ew, "  note: Codex's projection of thread %s in %s (%d items, %d turns) was made from the file up to byte %d, and the cuts change it from byte %d on: --write deletes the projection in one transaction before it replaces the file, as Codex does before it rewrites a rollout; reclaim --undo puts it back\n",
					pp.ThreadID, termsafe.String(filepath.Base(pp.DB)), pp.Items, pp.Turns, pp.Cursor, pp.From)
			}
		}
	}
	mode := "dry run: nothing is written; add --write to apply"
	if write {
		mode = fmt.Sprintf("%d files written; undo with rollout reclaim --undo FILE", written)
	}
	fmt.Fprintf(ew, "%d files, %s -> %s (+ %s in archives), frees %s (%s)\n", len(outcomes), Size(before), Size(after), Size(archived), Size(before-after), mode)
	if refused > 0 {
		fmt.Fprintf(ew, "%d files refused\n", refused)
	}
	return ew.Err
}
