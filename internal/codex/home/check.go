package home

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// Observation is one fact about a home, on the file it concerns: a rollout,
// a database, a lock file or a leftover.
type Observation struct {
	Path string
	reconstruct.Observation
}

// Report is what Check found in a home.
type Report struct {
	Observations []Observation
	// Notes say what could not be checked and why (no database, a schema
	// this version does not know, no file locks on this system).
	Notes []string
	// Incomplete: a database, table or file could not be read, so some
	// rules did not run (the notes say which).
	Incomplete bool
	// Files are the rollouts of the home, Threads the rows of its index.
	Files, Threads int
}

// CheckOptions bound the check.
type CheckOptions struct {
	MaxLineBytes int64 // longest line read (0: rollout's default)
}

// file is what the check needs of one rollout of the home.
type file struct {
	path     string
	threadID string // session_meta's id, else the name's
	// rolloutID keys the file's projection in thread_history_N.sqlite:
	// the id after '_' in the name of a file thread/revert wrote, else the
	// thread id (rollout.ParseName).
	rolloutID string
	mode      string // session_meta's history_mode ("" when unknown)
	noMeta    bool   // no session_meta (an empty file): the thread id is the name's
	// resolved is the path made absolute with its links resolved
	// (resolve), "" when that is path itself: most are, and a copy per
	// file is a copy per file of a home of 50,000.
	resolved string
	archived bool // under archived_sessions/
}

// Check compares a home's databases, locks and leftovers with its rollout
// files. It reads the databases read-only and the rollouts of threads with
// a projection to their end; it writes nothing.
func Check(h *Home, opts CheckOptions) (*Report, error) {
	if fi, err := os.Stat(h.Dir); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", h.Dir)
	}
	r := &Report{}
	files, err := h.rollouts()
	if err != nil {
		return nil, err
	}
	r.Files = len(files)
	byThread := map[string][]*file{}
	byPath := map[string]*file{}
	rs := newResolver()
	for _, f := range files {
		byThread[f.threadID] = append(byThread[f.threadID], f)
		if p := rs.resolve(f.path); p != f.path {
			f.resolved = p
		}
		byPath[f.key()] = f
	}

	rows := h.checkThreads(r, rs, byThread, byPath)
	h.checkProjection(r, projectedFiles(rs, rows, files, byPath), byThread, opts)
	h.checkLocks(r)
	h.checkMigrations(r, byThread)
	sort.SliceStable(r.Observations, func(i, j int) bool {
		a, b := r.Observations[i], r.Observations[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Pos.Line < b.Pos.Line
	})
	return r, nil
}

func (r *Report) add(path string, line int, offset int64, ev reconstruct.Evidence) {
	r.Observations = append(r.Observations, Observation{Path: path, Observation: reconstruct.Observation{
		Pos: reconstruct.Pos{Line: line, Offset: offset}, Evidence: ev}})
}

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// incomplete notes what could not be checked.
func (r *Report) incomplete(format string, args ...any) {
	r.Incomplete = true
	r.note(format, args...)
}

// rollouts lists the rollout files of sessions/ and archived_sessions/.
func (h *Home) rollouts() ([]*file, error) {
	var out []*file
	for _, sub := range []string{SessionsDir, ArchivedSessionsDir} {
		dir := filepath.Join(h.Dir, sub)
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			continue
		}
		paths, err := discover(dir)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			f := &file{path: p, archived: sub == ArchivedSessionsDir}
			m, _ := rollout.ReadMeta(p)
			// Copies: the strings of a Meta are slices of the whole
			// session_meta it was read from, which they would keep alive.
			f.threadID, f.mode = strings.Clone(m.ThreadID), historyMode(m.HistoryMode)
			if f.threadID == "" {
				f.threadID, _ = rollout.ThreadIDFromName(p)
				f.noMeta = true
			}
			f.rolloutID = ProjectionKey(p, f.threadID)
			if f.threadID != "" {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// key is the file's resolved path: the key of byPath.
func (f *file) key() string {
	if f.resolved != "" {
		return f.resolved
	}
	return f.path
}

// historyMode is a history_mode of session_meta, one string per value.
func historyMode(m string) string {
	switch m {
	case rollout.HistoryLegacy:
		return rollout.HistoryLegacy
	case rollout.HistoryPaginated:
		return rollout.HistoryPaginated
	}
	return strings.Clone(m)
}

// checkThreads compares the threads table with the files; it returns the
// rows by thread id (nil when the table cannot be read).
func (h *Home) checkThreads(r *Report, rs *resolver, byThread map[string][]*file, byPath map[string]*file) map[string]*Thread {
	path := h.StateDB()
	if path == "" {
		r.note("%s has no state_N.sqlite: Codex has not indexed its threads (a home of Codex 0.x before the SQLite index), so the home/row and home/rollout rules did not run", h.Dir)
		return nil
	}
	d, err := OpenDB(path)
	if err != nil {
		r.incomplete("cannot open %s: %v", path, err)
		return nil
	}
	defer d.Close()
	threads, err := threads(d)
	if err != nil {
		r.incomplete("%v; the home/row and home/rollout rules did not run", err)
		return nil
	}
	r.Threads = len(threads)
	homeDir := rs.resolve(h.Dir)
	rows := make(map[string]*Thread, len(threads))
	claimed := map[*file]string{} // file -> the first row naming it
	for i := range threads {
		t := &threads[i]
		id := strings.ToLower(t.ID)
		rows[id] = t
		found := ""
		for _, f := range byThread[id] {
			// A reverted thread has a file per revert: the newest name
			// (rollout-<time>-<thread>_<rollout>) is its current one, the
			// one Codex finds by name.
			if found == "" || filepath.Base(f.path) > filepath.Base(found) {
				found = f.path
			}
		}
		rowPath := rs.resolve(t.RolloutPath)
		switch {
		case !within(homeDir, rowPath):
			r.add(path, 0, 0, reconstruct.HomeRowOutsideHomeEvidence{ThreadID: t.ID, RolloutPath: t.RolloutPath, Home: h.Dir, FoundAt: found})
			continue
		case !exists(t.RolloutPath):
			r.add(path, 0, 0, reconstruct.HomeRowFileMissingEvidence{ThreadID: t.ID, RolloutPath: t.RolloutPath, FoundAt: found})
			continue
		}
		f := byPath[rowPath]
		if f == nil { // a file the walk does not count (not named rollout-*)
			continue
		}
		other, dup := claimed[f]
		if f.threadID != id || dup {
			owner := f.threadID
			if dup {
				owner = other
			}
			alt := ""
			for _, g := range byThread[id] {
				if g != f {
					alt = g.path
				}
			}
			r.add(f.path, 1, 0, reconstruct.HomeRowOtherThreadEvidence{ThreadID: t.ID, RolloutPath: t.RolloutPath, FileThread: owner, FoundAt: alt})
			continue
		}
		claimed[f] = id
		if t.HistoryMode != "" && f.mode != "" && t.HistoryMode != f.mode {
			r.add(f.path, 1, 0, reconstruct.HomeHistoryModeMismatchEvidence{ThreadID: t.ID, Row: t.HistoryMode, File: f.mode})
		}
		if t.HasArchived && t.Archived != f.archived {
			dir := SessionsDir
			if f.archived {
				dir = ArchivedSessionsDir
			}
			r.add(f.path, 1, 0, reconstruct.HomeArchivedMismatchEvidence{ThreadID: t.ID, Archived: t.Archived, Dir: dir})
		}
	}
	checkAttached(r, path, threads, rows, byThread)
	ids := make([]string, 0, len(byThread))
	for id := range byThread {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if _, ok := rows[id]; ok {
			continue
		}
		for _, f := range byThread[id] {
			r.add(f.path, 1, 0, reconstruct.HomeRolloutWithoutRowEvidence{ThreadID: id, NoMeta: f.noMeta})
		}
	}
	return rows
}

// checkAttached follows the attached-thread edges of the threads table
// (attached_thread_parent_id): each must name a thread that has a row, and
// following them must end at a thread attached to none. A cycle is
// reported once, on its least id.
func checkAttached(r *Report, db string, threads []Thread, rows map[string]*Thread, byThread map[string][]*file) {
	reported := map[string]bool{}
	for _, t := range threads {
		if t.AttachedTo == "" {
			continue
		}
		parent := strings.ToLower(t.AttachedTo)
		if _, ok := rows[parent]; !ok {
			ev := reconstruct.HomeAttachedParentMissingEvidence{ThreadID: t.ID, Parent: t.AttachedTo}
			if fs := byThread[parent]; len(fs) > 0 {
				ev.ParentRollout = fs[0].path
			}
			r.add(db, 0, 0, ev)
			continue
		}
		// Up the edges from t; each thread once.
		seen := map[string]bool{strings.ToLower(t.ID): true}
		path := []string{t.ID}
		for id := parent; id != ""; {
			if seen[id] {
				if id == strings.ToLower(t.ID) && !reported[id] {
					cycle := append([]string(nil), path...)
					least := cycle[0]
					for _, c := range cycle {
						reported[strings.ToLower(c)] = true
						least = min(least, c)
					}
					if strings.EqualFold(least, t.ID) {
						r.add(db, 0, 0, reconstruct.HomeAttachedCycleEvidence{ThreadID: t.ID, Cycle: cycle})
					}
				}
				break
			}
			seen[id] = true
			next, ok := rows[id]
			if !ok {
				break // its own finding
			}
			path = append(path, next.ID)
			id = strings.ToLower(next.AttachedTo)
		}
	}
}

// checkProjection compares each projection cursor and the projected items
// with the rollout Codex applies them to (projectedFiles).
func (h *Home) checkProjection(r *Report, target map[string]*file, byThread map[string][]*file, opts CheckOptions) {
	path := h.HistoryDB()
	if path == "" {
		return // no paginated thread was ever projected
	}
	d, err := OpenDB(path)
	if err != nil {
		r.incomplete("cannot open %s: %v", path, err)
		return
	}
	defer d.Close()
	cursors, err := cursors(d)
	if se := (*SchemaError)(nil); errors.As(err, &se) && len(se.Missing) == 0 && empty(d) {
		return // an empty database: nothing was ever projected
	}
	if err != nil {
		r.incomplete("%v; the home/projection rules did not run", err)
		return
	}
	for _, c := range cursors {
		if c.Pending {
			continue // a legacy backfill in progress: no cursor yet
		}
		f := target[strings.ToLower(c.ThreadID)]
		if f == nil {
			continue // no file to compare with: the row's rule says why
		}
		items, err := items(d, c.ThreadID)
		if err != nil {
			r.incomplete("%v; projected items of thread %s not compared", err, c.ThreadID)
		}
		other := func() string { return cursorOwner(f, c, byThread, opts) }
		if err := checkCursor(r, f.path, c, items, other, opts); err != nil {
			r.incomplete("reading %s: %v; its projection was not compared", f.path, err)
		}
	}
}

// projectedFiles maps each projection key (the thread_id column of the
// projection tables) to the rollout Codex applies that projection to.
// Codex keys a file's projection by its rollout id, not by its thread:
// after thread/revert the history database keeps the original file's
// projection under the thread id and the new file's under the id after
// '_' in its name (RolloutLineageSegment::rollout_id in
// codex-rs/thread-store/src/local/thread_history/segment_paging.rs;
// measured with Codex 0.148.0, 0.153.4, 0.160.1 and 0.171.0). A thread's
// current file is the one its threads row names, and Codex projects it
// under its rollout id; an earlier file of the lineage (the original of
// a reverted thread) is found by the rollout id its name carries, when
// one paginated file of the home carries it.
func projectedFiles(rs *resolver, rows map[string]*Thread, files []*file, byPath map[string]*file) map[string]*file {
	out := map[string]*file{}
	byRollout := map[string][]*file{}
	for _, f := range files {
		if f.mode == "paginated" {
			byRollout[f.rolloutID] = append(byRollout[f.rolloutID], f)
		}
	}
	for id, fs := range byRollout {
		if len(fs) == 1 {
			out[id] = fs[0]
		}
	}
	for _, t := range rows {
		if f := byPath[rs.resolve(t.RolloutPath)]; f != nil && f.threadID == strings.ToLower(t.ID) {
			out[f.rolloutID] = f // the file Codex resumes and projects
		}
	}
	return out
}

// ProjectionKey is the key of a rollout's projection in
// thread_history_N.sqlite (the thread_id column of its tables), thread
// being the file's thread: the rollout id its name carries after '_'
// (a file thread/revert wrote), else the thread id (see projectedFiles).
func ProjectionKey(path, thread string) string {
	thread = strings.ToLower(thread)
	if n, ok := rollout.ParseName(path); ok && (n.Thread == thread || thread == "") {
		return n.Rollout
	}
	return thread
}

// cursorOwner is the other rollout of the home whose end the cursor is
// (its size, and the ordinal after its last record), "" when none: a
// projection carried over from another file (openai/codex#43744: the
// cursor of a thread was the size of its first rollout after its row
// moved to a continuation). It is asked only of a cursor that does not
// fit its own file.
func cursorOwner(f *file, c Cursor, byThread map[string][]*file, opts CheckOptions) string {
	for _, g := range byThread[f.threadID] {
		if g == f || g.key() == f.key() {
			continue
		}
		if fi, err := os.Stat(g.path); err != nil || fi.Size() != c.Offset {
			continue
		}
		if last, ok := lastOrdinal(g.path, opts); ok && last+1 == c.Ordinal {
			return g.path
		}
	}
	return ""
}

// lastOrdinal is the ordinal of a rollout's last record that has one.
func lastOrdinal(path string, opts CheckOptions) (int64, bool) {
	rc, err := rollout.Open(path, nil)
	if err != nil {
		return 0, false
	}
	defer rc.Close()
	rd := rollout.NewReader(rc, opts.MaxLineBytes)
	defer rd.Release()
	var last int64
	found := false
	for {
		rec, err := rd.Next()
		if err != nil {
			return last, found && errors.Is(err, io.EOF)
		}
		if ord, ok := ordinalOf(rec); ok {
			last, found = ord, true
		}
	}
}

// checkCursor reads the rollout once: the line the cursor falls in, the
// ordinal at the cursor, and the records at the ordinals of the projected
// items.
func checkCursor(r *Report, path string, c Cursor, items []Item, owner func() string, opts CheckOptions) error {
	rc, err := rollout.Open(path, nil)
	if err != nil {
		return err
	}
	defer rc.Close()
	rd := rollout.NewReader(rc, opts.MaxLineBytes)
	defer rd.Release()
	want := map[int64][]Item{}
	for _, it := range items {
		want[it.Ordinal] = append(want[it.Ordinal], it)
	}
	var (
		end      int64 // offset after the last line read
		start    int64 // offset of the last line
		lastOrd  *int64
		atCursor = c.Offset == 0
		line     int
	)
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		line = rec.Line
		if rec.Offset == c.Offset {
			atCursor = true
			ord, ok := ordinalOf(rec)
			if !ok || ord != c.Ordinal {
				var found *int64
				if ok {
					found = &ord
				}
				r.add(path, rec.Line, rec.Offset, reconstruct.HomeProjectionOrdinalEvidence{ThreadID: c.ThreadID, Cursor: c.Offset, Expected: c.Ordinal, Found: found, BelongsTo: owner()})
			}
		} else if rec.Offset < c.Offset && c.Offset < rec.End() {
			r.add(path, rec.Line, rec.Offset, reconstruct.HomeProjectionOffBoundaryEvidence{ThreadID: c.ThreadID, Cursor: c.Offset, LineStart: rec.Offset, BelongsTo: owner()})
			atCursor = true // reported
		}
		end, start = rec.End(), rec.Offset
		if ord, ok := ordinalOf(rec); ok {
			o := ord
			lastOrd = &o
			if its := want[ord]; len(its) > 0 && rec.Offset < c.Offset {
				for _, it := range its {
					if !carries(rec.Raw, it.ItemID) {
						r.add(path, rec.Line, rec.Offset, reconstruct.HomeProjectedItemMismatchEvidence{ThreadID: c.ThreadID, ItemID: it.ItemID, ItemType: it.Type, Ordinal: ord, RecordType: recordType(rec)})
					}
				}
				delete(want, ord)
			}
		}
	}
	switch {
	case c.Offset > end:
		r.add(path, line, start, reconstruct.HomeProjectionPastEOFEvidence{ThreadID: c.ThreadID, Cursor: c.Offset, Size: end, BelongsTo: owner()})
		return nil // the items cannot be judged against a file Codex will not read
	case c.Offset == end && !atCursor && end > 0:
		next := int64(0)
		if lastOrd != nil {
			next = *lastOrd + 1
		}
		if next != c.Ordinal {
			r.add(path, line, start, reconstruct.HomeProjectionOrdinalEvidence{ThreadID: c.ThreadID, Cursor: c.Offset, Expected: c.Ordinal, Found: &next, BelongsTo: owner()})
		}
	}
	ords := make([]int64, 0, len(want))
	for o := range want {
		if o < c.Ordinal {
			ords = append(ords, o)
		}
	}
	sort.Slice(ords, func(i, j int) bool { return ords[i] < ords[j] })
	for _, o := range ords {
		for _, it := range want[o] {
			r.add(path, 0, 0, reconstruct.HomeProjectedItemMismatchEvidence{ThreadID: c.ThreadID, ItemID: it.ItemID, ItemType: it.Type, Ordinal: o})
		}
	}
	return nil
}

func ordinalOf(rec *rollout.Record) (int64, bool) {
	if !rec.Valid() {
		return 0, false
	}
	return rec.Ordinal()
}

func recordType(rec *rollout.Record) string {
	if !rec.Valid() {
		return "(not a JSON object)"
	}
	t := rec.Type()
	if pt := rec.Payload().Get("type").String(); pt != "" {
		t += "." + pt
	}
	return t
}

// carries reports whether a record names the item: its id as a JSON string
// anywhere in the line (item_completed carries it in payload.item.id, a
// response item in payload.id, a tool call in call_id).
func carries(raw []byte, id string) bool {
	if id == "" || raw == nil {
		return raw != nil
	}
	q := rollout.AppendJSONString(nil, id)
	return bytes.Contains(raw, q)
}

// checkLocks reports the writer locks that are held, and stale ones.
func (h *Home) checkLocks(r *Report) {
	if !Locks {
		if exists(filepath.Join(h.Dir, WriterLocksDir)) {
			r.note("writer locks not checked: %v", ErrNoLocks)
		}
		return
	}
	locks, err := h.WriterLocks()
	if err != nil {
		r.incomplete("writer locks: %v", err)
	}
	for _, wl := range locks {
		if wl.Held {
			r.add(wl.Path, 0, 0, reconstruct.HomeWriterLockHeldEvidence{ThreadID: wl.ThreadID, PID: wl.PID, Alive: wl.Alive})
		} else {
			r.add(wl.Path, 0, 0, reconstruct.HomeWriterLockStaleEvidence{ThreadID: wl.ThreadID, PID: wl.PID, Alive: wl.Alive})
		}
	}
}

// checkMigrations reports the journals and staged copies of migrations
// that did not finish.
func (h *Home) checkMigrations(r *Report, byThread map[string][]*file) {
	entries, _ := os.ReadDir(filepath.Join(h.Dir, MigrationsDir))
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".pending")
		if ok && e.Type().IsRegular() && isUUID(id) {
			r.add(filepath.Join(h.Dir, MigrationsDir, e.Name()), 0, 0, reconstruct.HomeMigrationPendingEvidence{ThreadID: strings.ToLower(id)})
		}
	}
	for _, s := range h.Staged() {
		r.add(s.Path, 0, 0, reconstruct.HomeMigrationStagedEvidence{Rollout: s.Rollout, Bytes: s.Bytes})
	}
}

// StagedFile is a copy a migration staged beside a rollout and did not
// publish or clean: .<name>.paginated.tmp, .decompressed.tmp or
// .paginated.zst.tmp.
type StagedFile struct {
	Path    string
	Rollout string // the rollout it stages, when it still exists
	Bytes   int64
}

// stagedSuffixes are the suffixes of Codex's staged migration files.
var stagedSuffixes = []string{".paginated.tmp", ".decompressed.tmp", ".paginated.zst.tmp"}

// Staged lists the staged migration files under sessions/ and
// archived_sessions/.
func (h *Home) Staged() []StagedFile {
	var out []StagedFile
	for _, sub := range []string{SessionsDir, ArchivedSessionsDir} {
		filepath.WalkDir(filepath.Join(h.Dir, sub), func(p string, e fs.DirEntry, err error) error {
			if err != nil || !e.Type().IsRegular() {
				return nil
			}
			name := e.Name()
			if !strings.HasPrefix(name, ".rollout-") {
				return nil
			}
			for _, suf := range stagedSuffixes {
				if base, ok := strings.CutSuffix(name[1:], suf); ok {
					s := StagedFile{Path: p}
					if fi, err := e.Info(); err == nil {
						s.Bytes = fi.Size()
					}
					if orig := filepath.Join(filepath.Dir(p), base); exists(orig) {
						s.Rollout = orig
					}
					out = append(out, s)
					break
				}
			}
			return nil
		})
	}
	return out
}

// empty reports whether a database has no table at all (a file created
// by opening it, before Codex's migrations ran).
func empty(d *DB) bool {
	n := -1
	d.Read(func(tx *sql.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&n)
	})
	return n == 0
}
