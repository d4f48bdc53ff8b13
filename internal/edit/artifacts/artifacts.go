// Package artifacts decides where rollout keeps what it leaves behind a
// rollout it changes: repair's backups, quarantine and undo record,
// reclaim's archive, the bytes an agent appended while a file was being
// replaced, and the temporary files of a write.
//
// Codex looks for sessions by walking $CODEX_HOME/sessions and
// $CODEX_HOME/archived_sessions: file names that carry a thread id (Codex
// 0.58 resumed FILE.repair-undo.json) and rollout-*.jsonl[.zst] globs (the
// quarantine, reclaim's archive) are taken for sessions there. So for a
// rollout inside a Codex home, every artifact goes to one place of ours
// beside those trees, mirroring the rollout's path:
//
//	$CODEX_HOME/sessions/2026/03/10/rollout-…-<id>.jsonl
//	$CODEX_HOME/rollout-artifacts/sessions/2026/03/10/rollout-…-<id>.jsonl.bak
//
// A rollout anywhere else (a copy a support engineer works on) keeps its
// artifacts beside it, FILE.bak and so on, as it always has.
//
// Every name is derived from the rollout's own path, never read from a
// file: undo records and archives name nothing that undo trusts.
package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rollout-dev/rollout/internal/edit/outfile"
)

// StoreDir is the directory of a Codex home that holds rollout's artifacts.
const StoreDir = "rollout-artifacts"

// Suffixes of the artifacts of FILE, after FILE's base name.
const (
	BackupSuffix     = ".bak" // .bak, .bak.1, .bak.2, ...
	QuarantineSuffix = ".quarantine.jsonl"
	UndoSuffix       = ".repair-undo.json"
	// ProjectionSuffix: the rows of Codex's history projection repair
	// deleted, for repair --undo (beside the undo record).
	ProjectionSuffix = ".repair-undo.projection.json"
	// ReclaimProjectionSuffix: the same for reclaim --undo (after the
	// plain name, beside the archive).
	ReclaimProjectionSuffix = ".reclaimed.projection.json"
	ArchiveSuffix           = ".reclaimed.jsonl.zst" // after the plain name (FILE without .zst)
	LateSuffix              = ".late"                // .late, .late.1, ...: bytes appended during a replace
	ViewSuffix              = ".view.html"           // rollout view's page, after the name without .jsonl[.zst]
)

// MaxIndex bounds the numbered artifacts (FILE.bak.N, FILE.late.N).
const MaxIndex = 999

// Place is where the artifacts of one rollout go.
type Place struct {
	File string // the rollout, as named
	// Home is the Codex home the rollout is in ("" when none); Tree is
	// "sessions" or "archived_sessions".
	Home, Tree string
	Dir        string // the directory of every artifact
	Base       string // the rollout's base name: every artifact is Dir/Base+suffix
}

// trees are the directories of a Codex home that Codex lists and searches.
var trees = []string{"sessions", "archived_sessions"}

// For finds the place of path's artifacts. A rollout is in a Codex home
// when a directory above it is named sessions or archived_sessions (the
// nearest one): the home is that directory's parent. The path is made
// absolute to find the home (symlinks are not resolved); the names are
// relative when path is.
func For(path string) (Place, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Place{}, err
	}
	p := Place{File: path, Base: filepath.Base(abs), Dir: filepath.Dir(path)}
	for d := filepath.Dir(abs); ; {
		parent := filepath.Dir(d)
		if parent == d {
			return p, nil // no home: beside the file
		}
		if name := filepath.Base(d); name == trees[0] || name == trees[1] {
			if filepath.Base(parent) == StoreDir {
				return p, nil // a file of the store itself
			}
			rel, err := filepath.Rel(parent, filepath.Dir(abs))
			if err != nil {
				return Place{}, err
			}
			p.Home, p.Tree = parent, name
			p.Dir = filepath.Join(parent, StoreDir, rel)
			if !filepath.IsAbs(path) {
				// Named as the user named the file: relative to here.
				if cwd, err := os.Getwd(); err == nil {
					if h, err := filepath.Rel(cwd, p.Home); err == nil {
						p.Home, p.Dir = h, filepath.Join(h, StoreDir, rel)
					}
				}
			}
			return p, nil
		}
		d = parent
	}
}

// InHome reports whether the rollout is in a Codex home (its artifacts are
// in the store, not beside it).
func (p Place) InHome() bool { return p.Home != "" }

func (p Place) name(suffix string) string { return filepath.Join(p.Dir, p.Base+suffix) }

func numbered(name string, i int) string {
	if i == 0 {
		return name
	}
	return name + "." + strconv.Itoa(i)
}

// Backup is the i-th backup name: FILE.bak, FILE.bak.1, ...
func (p Place) Backup(i int) string { return numbered(p.name(BackupSuffix), i) }

// Late is the i-th name for bytes appended while FILE was replaced.
func (p Place) Late(i int) string { return numbered(p.name(LateSuffix), i) }

// Quarantine holds the lines repair removed from FILE.
func (p Place) Quarantine() string { return p.name(QuarantineSuffix) }

// UndoRecord is what repair --undo FILE reads.
func (p Place) UndoRecord() string { return p.name(UndoSuffix) }

// UndoProjection holds the projection rows the undo record names.
func (p Place) UndoProjection() string { return p.name(ProjectionSuffix) }

// ReclaimProjection holds the projection rows reclaim --write deleted.
func (p Place) ReclaimProjection() string {
	return filepath.Join(p.Dir, strings.TrimSuffix(p.Base, ".zst")+ReclaimProjectionSuffix)
}

// Archive is reclaim's archive of the bytes it removed from FILE (named
// after the plain file: FILE.jsonl and FILE.jsonl.zst share it).
func (p Place) Archive() string {
	return filepath.Join(p.Dir, strings.TrimSuffix(p.Base, ".zst")+ArchiveSuffix)
}

// View is rollout view's page of FILE: NAME.view.html for NAME.jsonl[.zst].
func (p Place) View() string {
	name := strings.TrimSuffix(strings.TrimSuffix(p.Base, ".zst"), ".jsonl")
	return filepath.Join(p.Dir, name+ViewSuffix)
}

// Beside is the place older versions of rollout used inside a Codex home:
// next to the file. Undo reads what they left there, and `rollout
// artifacts` moves it to the store.
func (p Place) Beside() Place {
	return Place{File: p.File, Dir: filepath.Dir(p.File), Base: p.Base}
}

// IsBackup reports whether base is one of the names Backup gives.
func (p Place) IsBackup(base string) (int, bool) { return p.indexOf(base, BackupSuffix) }

// IsLate reports whether base is one of the names Late gives.
func (p Place) IsLate(base string) (int, bool) { return p.indexOf(base, LateSuffix) }

func (p Place) indexOf(base, suffix string) (int, bool) {
	rest, ok := strings.CutPrefix(base, p.Base+suffix)
	if !ok {
		return 0, false
	}
	if rest == "" {
		return 0, true
	}
	n, ok := strings.CutPrefix(rest, ".")
	i, err := strconv.Atoi(n)
	if !ok || err != nil || i < 1 || i > MaxIndex || strconv.Itoa(i) != n {
		return 0, false
	}
	return i, true
}

// ErrUnsafeStore is a store path that is not a plain directory of ours: a
// symlink (it could send our files anywhere) or a file.
var ErrUnsafeStore = errors.New("not a plain directory")

// An OwnerError is a directory of the store that another user could
// change: owned by someone other than root, the Codex home's owner or this
// process, or writable by its group or by others (sticky or not). Whoever
// can write there can swap a directory for a symlink, or delete or replace
// a backup or an undo record before it is used.
type OwnerError struct {
	Dir     string
	UID     int
	Owner   string // the owner's user name ("" when unknown)
	Mode    fs.FileMode
	HomeUID int
	Foreign bool // the owner is none of those allowed
}

func (e *OwnerError) Error() string {
	who := fmt.Sprintf("uid %d", e.UID)
	if e.Owner != "" {
		who = fmt.Sprintf("%s (uid %d)", e.Owner, e.UID)
	}
	var why []string
	if e.Foreign {
		why = append(why, fmt.Sprintf("is owned by %s, not by root or the owner of the Codex home (uid %d)", who, e.HomeUID))
	} else {
		why = append(why, "(owned by "+who+")")
	}
	if e.Mode&0o022 != 0 {
		why = append(why, fmt.Sprintf("is writable by others (mode %#o)", e.Mode.Perm()))
	}
	if !e.Foreign {
		return fmt.Sprintf("%s %s %s: refusing to keep rollout's artifacts where another user can replace them", e.Dir, why[0], why[1])
	}
	return fmt.Sprintf("%s %s: refusing to keep rollout's artifacts where another user can replace them", e.Dir, strings.Join(why, " and "))
}

// Open opens the directory of the artifacts. In a Codex home it is
// reached from the home component by component, each opened without
// following a symlink (a symlink or a file there wraps ErrUnsafeStore),
// and each must belong to root, the home's owner or this process and be
// writable by no one else (*OwnerError): every artifact is then made
// relative to the directory returned, which no other user can redirect.
// With create, missing directories are made (0700, given to the home's
// owner when root makes them); without, a missing one is (nil, nil).
// Beside the file, the file's directory is opened as named.
func (p Place) Open(create bool) (*outfile.Dir, error) {
	if !p.InHome() {
		return outfile.OpenDir(p.Dir)
	}
	rel, err := filepath.Rel(p.Home, p.Dir)
	if err != nil {
		return nil, err
	}
	d, err := outfile.OpenDir(p.Home)
	if err != nil {
		return nil, err
	}
	home, err := d.Stat()
	if err != nil {
		d.Close()
		return nil, err
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		sub, err := d.Sub(part)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err := d.Mkdir(part, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				d.Close()
				return nil, err
			}
			if sub, err = d.Sub(part); err == nil {
				giveTo(sub, home)
			}
		}
		if err != nil {
			d.Close()
			if errors.Is(err, fs.ErrNotExist) && !create {
				return nil, nil
			}
			if ue := (*outfile.UnsafeError)(nil); errors.As(err, &ue) {
				return nil, fmt.Errorf("%s is a %s: %w", ue.Path, ue.Kind, ErrUnsafeStore)
			}
			return nil, err
		}
		if err := checkOwner(sub, home); err != nil {
			sub.Close()
			return nil, err
		}
		d = sub
	}
	return d, nil
}

// Prepare creates the directory of the artifacts when it is the store's,
// and checks it as Open does.
func (p Place) Prepare() error {
	d, err := p.Open(true)
	d.Close()
	return err
}

// Check refuses a store directory that exists and is not safe to use (see
// Open), without creating anything: for the commands that only read or
// remove artifacts.
func (p Place) Check() error {
	if !p.InHome() {
		return nil
	}
	d, err := p.Open(false)
	d.Close()
	return err
}

// TempDir is where the temporary file that replaces FILE is written: the
// store, when it is on FILE's file system (a rename cannot cross file
// systems), else FILE's own directory. Call it after Prepare.
func (p Place) TempDir() string {
	dir := filepath.Dir(p.File)
	if p.InHome() && sameDevice(p.Dir, dir) {
		return p.Dir
	}
	return dir
}

// TempIn is TempDir for a store opened by Open: d when it is on FILE's
// file system, else nil (FILE's own directory, by path).
func (p Place) TempIn(d *outfile.Dir) *outfile.Dir {
	if d == nil || !p.InHome() {
		return nil
	}
	fi, err1 := d.Stat()
	beside, err2 := os.Stat(filepath.Dir(p.File))
	if err1 != nil || err2 != nil || !sameDeviceInfo(fi, beside) {
		return nil
	}
	return d
}

// Tidy removes the store directories of the place that are empty, from
// the deepest up to the store itself: what a refused or undone write
// leaves is nothing. Beside the file it does nothing.
func (p Place) Tidy() {
	if !p.InHome() {
		return
	}
	d, err := p.Open(false)
	if err == nil && d != nil {
		TidyDir(d)
		d.Close()
	}
}

// TidyDir removes d, a store directory Open returned, and the store
// directories above it while they are empty, relative to the parents
// Open checked, up to the store itself.
func TidyDir(d *outfile.Dir) {
	for ; d != nil && d.Parent() != nil; d = d.Parent() {
		if !d.RemoveSelf() {
			return // not empty, or no longer there
		}
	}
}

// Temps lists the temporary files of writes to the rollout or to its
// artifacts (".BASE[SUFFIX].tmpXXXX", see outfile.Create) in the store and
// beside the file: a write killed before its rename leaves one. Every
// command that makes them holds the rollout's lock (inplace.Lock) while they
// exist, so under that lock any found is a leftover.
func (p Place) Temps() []string {
	dirs := []string{p.Dir}
	if d := filepath.Dir(p.File); d != p.Dir {
		dirs = append(dirs, d)
	}
	var out []string
	for _, d := range dirs {
		es, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range es {
			if e.Type().IsRegular() && p.isTemp(e.Name()) {
				out = append(out, filepath.Join(d, e.Name()))
			}
		}
	}
	return out
}

func (p Place) isTemp(name string) bool {
	i := strings.LastIndex(name, ".tmp")
	if i < 0 || i+4 == len(name) {
		return false
	}
	for _, c := range name[i+4:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	plain := strings.TrimSuffix(p.Base, ".zst")
	switch name[:i] {
	case "." + p.Base, "." + plain, "." + plain + ".zst", "." + plain + ArchiveSuffix, "." + plain + ReclaimProjectionSuffix,
		"." + p.Base + BackupSuffix, "." + p.Base + QuarantineSuffix, "." + p.Base + UndoSuffix, "." + p.Base + ProjectionSuffix, "." + p.Base + LateSuffix:
		return true
	}
	return false
}

// RemoveTemps removes what Temps finds, those of the store relative to
// the directory Open checked. Call it only holding the lock.
func (p Place) RemoveTemps() {
	if d, err := p.Open(false); err == nil && d != nil {
		if es, err := d.ReadDir(); err == nil {
			for _, e := range es {
				if e.Type().IsRegular() && p.isTemp(e.Name()) {
					d.Remove(e.Name())
				}
			}
		}
		d.Close()
	}
	if beside := filepath.Dir(p.File); p.InHome() && beside != p.Dir {
		for _, t := range (Place{File: p.File, Dir: beside, Base: p.Base}).Temps() {
			os.Remove(t)
		}
	}
}

// Kinds of artifacts, as Found reports them.
const (
	KindBackup     = "backup"
	KindQuarantine = "quarantine"
	KindUndo       = "undo record"
	KindArchive    = "reclaim archive"
	KindLate       = "late bytes"
	KindTemp       = "temporary file"
	KindView       = "view page"
)

// Found is an artifact on disk.
type Found struct {
	Path    string
	Kind    string
	Rollout string // the rollout it belongs to (it may no longer exist)
	Size    int64
	// Stray: it is inside sessions/ or archived_sessions/ (left there by an
	// older rollout), where Codex may take it for a session.
	Stray bool
}

// OfFile lists the artifacts of one rollout: in its place, and beside it.
func OfFile(path string) ([]Found, error) {
	p, err := For(path)
	if err != nil {
		return nil, err
	}
	var out []Found
	places := []Place{p}
	if p.InHome() {
		places = append(places, p.Beside())
	}
	for i, pl := range places {
		es, err := os.ReadDir(pl.Dir)
		if err != nil {
			continue
		}
		for _, e := range es {
			if !e.Type().IsRegular() {
				continue
			}
			if kind := pl.kindOf(e.Name()); kind != "" {
				f := Found{Path: filepath.Join(pl.Dir, e.Name()), Kind: kind, Rollout: path, Stray: i > 0}
				if fi, err := e.Info(); err == nil {
					f.Size = fi.Size()
				}
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// kindOf tells which artifact of the place's rollout base is ("": none).
func (p Place) kindOf(base string) string {
	plain := strings.TrimSuffix(p.Base, ".zst")
	switch {
	case base == p.Base+QuarantineSuffix:
		return KindQuarantine
	case base == p.Base+UndoSuffix, base == p.Base+ProjectionSuffix:
		return KindUndo
	case base == plain+ArchiveSuffix, base == plain+ReclaimProjectionSuffix:
		return KindArchive
	case base == strings.TrimSuffix(plain, ".jsonl")+ViewSuffix:
		return KindView
	case p.isTemp(base):
		return KindTemp
	}
	if _, ok := p.IsBackup(base); ok {
		return KindBackup
	}
	if _, ok := p.IsLate(base); ok {
		return KindLate
	}
	return ""
}

// rolloutOf finds the rollout an artifact's base name belongs to: the
// rollout-*.jsonl[.zst] name it starts with (its own name, the plain name
// for an archive; a temporary file is ".NAME...tmpX").
func rolloutOf(base string) (string, string) {
	if v, ok := strings.CutSuffix(base, ViewSuffix); ok && strings.HasPrefix(v, "rollout-") {
		return v + ".jsonl", KindView
	}
	name := strings.TrimPrefix(base, ".")
	for _, ext := range []string{".jsonl.zst", ".jsonl"} {
		i := strings.Index(name, ext)
		for i >= 0 {
			cand := name[:i+len(ext)]
			if strings.HasPrefix(cand, "rollout-") {
				p := Place{Base: cand}
				if k := p.kindOf(base); k != "" {
					return cand, k
				}
			}
			j := strings.Index(name[i+1:], ext)
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	return "", ""
}

// Scan lists the artifacts of a Codex home: every file of its store, and
// the strays older versions left inside sessions/ and archived_sessions/.
func Scan(home string) ([]Found, error) {
	var out []Found
	store := filepath.Join(home, StoreDir)
	for _, tree := range trees {
		root := filepath.Join(home, tree)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && path == root {
					return nil
				}
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			name, kind := rolloutOf(d.Name())
			if kind == "" {
				return nil
			}
			f := Found{Path: path, Kind: kind, Rollout: filepath.Join(filepath.Dir(path), name), Stray: true}
			if fi, err := d.Info(); err == nil {
				f.Size = fi.Size()
			}
			out = append(out, f)
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	err := filepath.WalkDir(store, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == store {
				return nil
			}
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(store, filepath.Dir(path))
		if err != nil {
			return nil
		}
		name, kind := rolloutOf(d.Name())
		f := Found{Path: path, Kind: kind, Rollout: filepath.Join(home, rel, name)}
		if kind == "" {
			f.Kind, f.Rollout = "unknown", ""
		}
		if fi, err := d.Info(); err == nil {
			f.Size = fi.Size()
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// Destination is where a stray belongs: the same artifact in its
// rollout's place ("" for a temporary file, which is removed, not moved).
func (f Found) Destination() (string, error) {
	if f.Kind == KindTemp {
		return "", nil
	}
	p, err := For(f.Rollout)
	if err != nil {
		return "", err
	}
	if !p.InHome() {
		return "", fmt.Errorf("%s is not in a Codex home", f.Rollout)
	}
	return filepath.Join(p.Dir, filepath.Base(f.Path)), nil
}
