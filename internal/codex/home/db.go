package home

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver: no cgo, same binary everywhere
)

// BusyTimeout is how long a statement waits for a lock Codex holds before
// it gives up. Readers of a WAL database wait only while Codex recovers
// its WAL index; a write (the projection repair) waits for Codex's write
// transaction to end.
const BusyTimeout = 2 * time.Second

// readTimeout bounds one read transaction: reads are short so that a
// WAL reader never pins Codex's checkpoints for long.
const readTimeout = 30 * time.Second

// DB is one of Codex's databases, opened read-only.
type DB struct {
	Path string
	db   *sql.DB
	// immutable: opened without locks (no -wal or -journal existed), so
	// every read is checked against a change of the files (stamp).
	immutable bool
	stamp     string
}

// OpenDB opens a Codex database read-only and WAL-aware, never creating,
// locking against or writing what Codex owns:
//   - with a -wal beside it (Codex has it open, or left its WAL), in SQLite's
//     read-only mode: the reader takes its read mark in the -shm like any
//     WAL reader, sees the last committed transaction and never blocks a
//     writer;
//   - with a -journal beside it (a rollback-journal database mid-write),
//     read-only with the busy timeout;
//   - with neither (Codex is not running and checkpointed its WAL, or the
//     database is in rollback mode), as immutable: read-only mode would
//     create an empty -wal and a -shm and leave them behind. Each read then
//     checks that the files did not change meanwhile and is done again in
//     read-only mode if they did.
//
// The database and its side files must be regular files (a symbolic link
// to one is followed, as SQLite follows it): SQLite's open of a FIFO
// blocks until someone writes to it, for ever.
func OpenDB(path string) (*DB, error) {
	if err := checkFiles(path); err != nil {
		return nil, err
	}
	d := &DB{Path: path}
	d.immutable = !exists(path+"-wal") && !exists(path+"-journal")
	if err := d.open(); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *DB) open() error {
	q := url.Values{}
	q.Set("mode", "ro")
	if d.immutable {
		q.Set("immutable", "1")
		d.stamp = stampOf(d.Path)
	}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "query_only(1)")
	db, err := sql.Open("sqlite", dsn(d.Path, q))
	if err != nil {
		return fmt.Errorf("opening %s: %w", d.Path, err)
	}
	db.SetMaxOpenConns(1)
	d.db = db
	return nil
}

// dsn is the URI of path with the query q (the path escaped: a name may
// hold '?' or '#').
func dsn(path string, q url.Values) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs // a relative path would read as the URI's authority
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}

// Close closes the database.
func (d *DB) Close() error {
	if d == nil || d.db == nil {
		return nil
	}
	return d.db.Close()
}

// Read runs fn in one read transaction: a consistent snapshot of the
// database. On an immutable open whose files changed during the read it
// reopens in read-only mode and reads again.
func (d *DB) Read(fn func(*sql.Tx) error) error {
	err := d.read(fn)
	if d.immutable && stampOf(d.Path) != d.stamp {
		d.db.Close()
		d.immutable = false
		if err := d.open(); err != nil {
			return err
		}
		err = d.read(fn)
	}
	return err
}

func (d *DB) read(fn func(*sql.Tx) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	tx, err := d.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("reading %s: %w", d.Path, err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return fmt.Errorf("reading %s: %w", d.Path, err)
	}
	return nil
}

// stampOf says what the database's files are: their sizes and times, and
// whether a -wal or -journal exists.
func stampOf(path string) string {
	s := ""
	for _, p := range []string{path, path + "-wal", path + "-journal"} {
		if fi, err := os.Stat(p); err == nil {
			s += fmt.Sprintf("%s:%d:%d;", p, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return s
}

// ErrNotRegular is a database, or a side file of one, that is not a
// regular file (a FIFO, a device, a directory).
var ErrNotRegular = errors.New("not a regular file")

// checkFiles checks that the database is a regular file, and its side
// files (-wal, -shm, -journal) regular files where they exist.
func checkFiles(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, fi.Mode().Type())
	}
	for _, side := range []string{"-wal", "-shm", "-journal"} {
		if fi, err := os.Stat(path + side); err == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: %w (%s)", path+side, ErrNotRegular, fi.Mode().Type())
		}
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Columns lists the columns of a table (nil when there is no such table).
func Columns(tx *sql.Tx, table string) (map[string]bool, error) {
	rows, err := tx.Query(`SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols map[string]bool
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		if cols == nil {
			cols = map[string]bool{}
		}
		cols[name] = true
	}
	return cols, rows.Err()
}

// SchemaError says that a table Codex keeps lacks what this version reads:
// a schema this version does not know.
type SchemaError struct {
	DB, Table string
	Missing   []string // columns; empty: the table itself is missing
}

func (e *SchemaError) Error() string {
	if len(e.Missing) == 0 {
		return fmt.Sprintf("%s has no table %s: a schema this version of rollout does not know", e.DB, e.Table)
	}
	return fmt.Sprintf("%s: table %s has no column %v: a schema this version of rollout does not know", e.DB, e.Table, e.Missing)
}

// need checks that table has the columns; it returns the table's columns.
func need(tx *sql.Tx, db, table string, cols ...string) (map[string]bool, error) {
	have, err := Columns(tx, table)
	if err != nil {
		return nil, err
	}
	if have == nil {
		return nil, &SchemaError{DB: db, Table: table}
	}
	var missing []string
	for _, c := range cols {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, &SchemaError{DB: db, Table: table, Missing: missing}
	}
	return have, nil
}

// isSchema reports whether err is a SchemaError.
func isSchema(err error) bool { return errors.As(err, new(*SchemaError)) }
