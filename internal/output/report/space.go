package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/output/schema"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
)

// The reports of `rollout space`: text, JSON and CSV.

// SpaceFailure is a file `rollout space` could not read.
type SpaceFailure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Size formats a byte count for people: 1,023 B, 12.3 KiB, 4.56 GiB.
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

func share(n, total int64) string {
	if total == 0 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(total))
}

// bar is a 20-cell share bar: the treemap of a terminal.
func bar(n, total int64) string {
	const cells = 20
	full := 0
	if total > 0 {
		full = int((n*cells + total/2) / total)
	}
	return strings.Repeat("█", full) + strings.Repeat("░", cells-full)
}

// WriteSpaceText writes the text report of `rollout space`.
// homes is the state of the Codex homes read (databases, migration
// leftovers), top the rows of each table.
func WriteSpaceText(w io.Writer, s *space.Summary, homes []home.Usage, top int) error {
	ew := &ErrWriter{W: w}
	fmt.Fprintf(ew, "%d files, %s on disk (%s of content, %d lines)\n", s.Files, Size(s.DiskBytes), Size(s.Bytes), s.Lines)
	defer writeHomeUsage(ew, homes, top)
	if s.Files == 0 {
		return ew.Err
	}
	fmt.Fprintf(ew, "\nBY RECORD TYPE\n")
	for _, b := range s.ByType() {
		fmt.Fprintf(ew, "  %s %10s %6s %8d  %s\n", bar(b.Bytes, s.Bytes), Size(b.Bytes), share(b.Bytes, s.Bytes), b.Count, termsafe.String(b.Name))
	}
	fmt.Fprintf(ew, "\nBY JSON PATH (top %d)\n", s.Top)
	for _, b := range s.ByClass() {
		fmt.Fprintf(ew, "  %10s %6s %8d  %s\n", Size(b.Bytes), share(b.Bytes, s.Bytes), b.Count, termsafe.String(b.Name))
	}
	if reps := s.Repeats(); len(reps) > 0 {
		fmt.Fprintf(ew, "\nREPEATED STRINGS (copies x size, bytes beyond the first copy, class and place of the first)\n")
		for _, r := range reps {
			fmt.Fprintf(ew, "  %16s %10s  %s  %s:%d\n", fmt.Sprintf("%d x %s", r.Count, Size(r.Size)), Size(r.Wasted()), termsafe.String(r.Class), termsafe.String(r.Path), r.FirstLine)
		}
	}
	fmt.Fprintf(ew, "\nLARGEST FILES (on disk, content, lines)\n")
	for _, f := range s.Largest() {
		fmt.Fprintf(ew, "  %10s %10s %8d  %s\n", Size(f.DiskBytes), Size(f.Bytes), f.Lines, termsafe.String(f.Path))
	}
	if trees := s.Trees(); len(trees) > 0 {
		fmt.Fprintf(ew, "\nTHREAD TREES: SUB-AGENTS AND ATTACHED THREADS UNDER THEIR PARENT (on disk, files, root)\n")
		for _, t := range trees {
			fmt.Fprintf(ew, "  %10s %8d  %s\n", Size(t.DiskBytes), t.Files, termsafe.String(t.Root.Path))
		}
	}
	fmt.Fprintf(ew, "\nRECLAIM POLICIES (rollout reclaim --policy P; what each frees and gives up)\n")
	for _, p := range s.Reclaimable() {
		fmt.Fprintf(ew, "  %-22s %10s %6s in %d files; gives up %s\n", p.Arg(), Size(p.Bytes), share(p.Bytes, s.DiskBytes), p.Files, p.GivesUp)
		if p.Why != "" {
			fmt.Fprintf(ew, "  %-22s nothing to free: %s\n", "", p.Why)
		}
	}
	return ew.Err
}

// spaceReport is the JSON report of `rollout space`: a designed schema,
// additive only.
type spaceReport struct {
	schema.Header
	Files     int                `json:"files"`
	DiskBytes int64              `json:"disk_bytes"`
	Bytes     int64              `json:"bytes"`
	Lines     int64              `json:"lines"`
	ByType    []space.Bucket     `json:"by_type"`
	ByClass   []space.Bucket     `json:"by_class"`
	Repeats   []spaceRepeat      `json:"repeats"`
	Trees     []spaceTree        `json:"trees"`
	Policies  []space.PolicyFree `json:"policies"`
	PerFile   []spaceFile        `json:"per_file"`
	Errors    []SpaceFailure     `json:"errors"`
	// Homes: the state of each Codex home read (databases, migration
	// leftovers), biggest file first.
	Homes []spaceHome `json:"homes"`
}

type spaceHome struct {
	Path    string          `json:"path"`
	Bytes   int64           `json:"bytes"`
	Biggest string          `json:"biggest"`
	Files   []spaceHomeFile `json:"files"`
}

type spaceHomeFile struct {
	Path  string `json:"path"`
	Kind  string `json:"kind"`
	Bytes int64  `json:"bytes"`
}

type spaceRepeat struct {
	space.LocatedRepeat
	Wasted int64 `json:"wasted"`
}

type spaceTree struct {
	RootPath     string `json:"root_path"`
	RootThreadID string `json:"root_thread_id"`
	Files        int    `json:"files"`
	DiskBytes    int64  `json:"disk_bytes"`
	Bytes        int64  `json:"bytes"`
}

type spaceFile struct {
	Path           string           `json:"path"`
	ThreadID       string           `json:"thread_id"`
	ParentThreadID string           `json:"parent_thread_id"`
	DiskBytes      int64            `json:"disk_bytes"`
	Bytes          int64            `json:"bytes"`
	Lines          int              `json:"lines"`
	Compressed     bool             `json:"compressed"`
	Cold           bool             `json:"cold"`
	Compactions    int              `json:"compactions"`
	RepeatWasted   int64            `json:"repeat_wasted"`
	Reclaimable    map[string]int64 `json:"reclaimable"`
	ByType         []space.Bucket   `json:"by_type"`
	ByClass        []space.Bucket   `json:"by_class"`
}

// WriteSpaceJSON writes the JSON report of `rollout space`.
func WriteSpaceJSON(w io.Writer, s *space.Summary, failed []SpaceFailure, homes []home.Usage) error {
	rep := spaceReport{Header: schema.NewHeader(schema.Space),
		Files: s.Files, DiskBytes: s.DiskBytes, Bytes: s.Bytes, Lines: s.Lines,
		ByType: nonNil(s.ByType()), ByClass: nonNil(s.ByClass()), Policies: s.Reclaimable(),
		Repeats: []spaceRepeat{}, Trees: []spaceTree{}, PerFile: []spaceFile{}, Errors: failed}
	if rep.Errors == nil {
		rep.Errors = []SpaceFailure{}
	}
	rep.Homes = []spaceHome{}
	for _, u := range homes {
		h := spaceHome{Path: u.Home, Bytes: u.Bytes, Files: []spaceHomeFile{}}
		if b, ok := u.Biggest(); ok {
			h.Biggest = b.Path
		}
		for _, f := range u.Files {
			h.Files = append(h.Files, spaceHomeFile{f.Path, f.Kind, f.Bytes})
		}
		rep.Homes = append(rep.Homes, h)
	}
	for _, r := range s.Repeats() {
		rep.Repeats = append(rep.Repeats, spaceRepeat{r, r.Wasted()})
	}
	for _, t := range s.Trees() {
		rep.Trees = append(rep.Trees, spaceTree{t.Root.Path, t.Root.ThreadID, t.Files, t.DiskBytes, t.Bytes})
	}
	// per_file is written row by row from the summary's spool, after the
	// rest: the report of 50,000 files is not held whole.
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	var head bytes.Buffer
	if err := json.NewEncoder(&head).Encode(rep); err != nil {
		return err
	}
	var tail bytes.Buffer
	if err := json.Indent(&tail, head.Bytes(), "", "  "); err != nil {
		return err
	}
	before, after, ok := bytes.Cut(tail.Bytes(), []byte(`"per_file": []`))
	if !ok {
		return fmt.Errorf("space report: per_file not found")
	}
	ew := &ErrWriter{W: w}
	ew.Write(before)
	ew.Write([]byte(`"per_file": [`))
	n := 0
	err := s.EachFile(func(f *space.File) error {
		sf := spaceFile{Path: f.Path, ThreadID: f.ThreadID, ParentThreadID: f.ParentThreadID,
			DiskBytes: f.DiskBytes, Bytes: f.Bytes, Lines: f.Lines, Compressed: f.Compressed, Cold: f.Cold,
			Compactions: f.Compactions, RepeatWasted: f.RepeatWasted, Reclaimable: map[string]int64{},
			ByType: nonNil(f.ByType[:min(len(f.ByType), s.Top)]), ByClass: nonNil(f.ByClass)}
		for _, p := range space.Policies {
			sf.Reclaimable[p.Name] = f.Freed(p.Name)
		}
		b, err := json.MarshalIndent(sf, "    ", "  ")
		if err != nil {
			return err
		}
		if n > 0 {
			ew.Write([]byte(","))
		}
		n++
		ew.Write([]byte("\n    "))
		ew.Write(b)
		return ew.Err
	})
	if err != nil {
		return err
	}
	if n > 0 {
		ew.Write([]byte("\n  ]"))
	} else {
		ew.Write([]byte("]"))
	}
	ew.Write(after)
	return ew.Err
}

func nonNil(b []space.Bucket) []space.Bucket {
	if b == nil {
		return []space.Bucket{}
	}
	return b
}

// WriteSpaceCSV writes the CSV report of `rollout space`: one row per file.
func WriteSpaceCSV(w io.Writer, s *space.Summary) error {
	cw := csv.NewWriter(w)
	head := []string{"path", "thread_id", "parent_thread_id", "disk_bytes", "bytes", "lines", "compactions", "repeat_wasted"}
	for _, p := range space.Policies {
		head = append(head, "frees_"+strings.ReplaceAll(p.Name, "-", "_"))
	}
	cw.Write(head)
	err := s.EachFile(func(f *space.File) error {
		row := []string{f.Path, f.ThreadID, f.ParentThreadID, strconv.FormatInt(f.DiskBytes, 10),
			strconv.FormatInt(f.Bytes, 10), strconv.Itoa(f.Lines), strconv.Itoa(f.Compactions), strconv.FormatInt(f.RepeatWasted, 10)}
		for _, p := range space.Policies {
			row = append(row, strconv.FormatInt(f.Freed(p.Name), 10))
		}
		return cw.Write(row)
	})
	cw.Flush()
	return errors.Join(err, cw.Error())
}

// ErrWriter keeps the first write error so printers can check once.
type ErrWriter struct {
	W   io.Writer
	Err error
}

func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.Err != nil {
		return len(p), nil
	}
	_, e.Err = e.W.Write(p)
	return len(p), nil
}

// writeHomeUsage writes the state of each home: its total, its biggest
// file, and its largest files.
func writeHomeUsage(ew *ErrWriter, homes []home.Usage, top int) {
	for _, u := range homes {
		b, ok := u.Biggest()
		if !ok {
			continue
		}
		fmt.Fprintf(ew, "\nCODEX HOME STATE (%s: databases and migration leftovers, %s; the biggest: %s, %s)\n",
			termsafe.String(u.Home), Size(u.Bytes), termsafe.String(filepath.Base(b.Path)), Size(b.Bytes))
		for i, f := range u.Files {
			if i == top {
				fmt.Fprintf(ew, "  and %d more\n", len(u.Files)-top)
				break
			}
			fmt.Fprintf(ew, "  %10s  %-17s %s\n", Size(f.Bytes), f.Kind, termsafe.String(f.Path))
		}
	}
}
