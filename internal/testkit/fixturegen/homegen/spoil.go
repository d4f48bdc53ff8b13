package homegen

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// Spoilage is a way a database of a home cannot be read by another
// connection, as issue 36 found them.
type Spoilage int

const (
	// ExclusiveMode: a connection in exclusive locking mode that wrote,
	// and so holds the lock until it closes.
	ExclusiveMode Spoilage = iota + 1
	// JournalWriter: the database in rollback-journal mode, a write
	// transaction open (its -journal beside it, the exclusive lock held).
	JournalWriter
	// Damaged: the file's header overwritten.
	Damaged
	// ForeignNewer: a newer-numbered file of the same family beside it,
	// of another schema.
	ForeignNewer
)

func (s Spoilage) String() string {
	return map[Spoilage]string{ExclusiveMode: "exclusive-mode", JournalWriter: "journal-writer", Damaged: "damaged", ForeignNewer: "foreign-newer"}[s]
}

// Spoilages are all of them.
var Spoilages = []Spoilage{ExclusiveMode, JournalWriter, Damaged, ForeignNewer}

var numbered = regexp.MustCompile(`^(.*_)([0-9]+)\.sqlite$`)

// Spoil makes the database at path unreadable in the way s; release
// ends a held lock (it must be called).
func Spoil(path string, s Spoilage) (release func(), err error) {
	release = func() {}
	switch s {
	case Damaged:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return release, err
		}
		defer f.Close()
		_, err = f.WriteAt([]byte("not an SQLite database, whatever the name says"), 0)
		return release, err
	case ForeignNewer:
		m := numbered.FindStringSubmatch(filepath.Base(path))
		if m == nil {
			return release, fmt.Errorf("%s: not a numbered database", path)
		}
		n, _ := strconv.Atoi(m[2])
		return release, Exec(filepath.Join(filepath.Dir(path), fmt.Sprintf("%s%d.sqlite", m[1], n+1)), `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);`)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(2000)")
	if s == ExclusiveMode {
		q.Add("_pragma", "locking_mode(EXCLUSIVE)")
	} else {
		q.Set("_txlock", "exclusive")
	}
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}).String())
	if err != nil {
		return release, err
	}
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	var v int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		db.Close()
		return release, err
	}
	write := fmt.Sprintf(`PRAGMA user_version = %d`, v) // a write that changes nothing
	if s == ExclusiveMode {
		if _, err := db.ExecContext(ctx, write); err != nil {
			db.Close()
			return release, err
		}
		return func() { db.Close() }, nil
	}
	if _, err := db.ExecContext(ctx, `PRAGMA journal_mode = DELETE`); err != nil {
		db.Close()
		return release, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err == nil {
		_, err = tx.ExecContext(ctx, write)
	}
	if err != nil {
		db.Close()
		return release, err
	}
	return func() { tx.Rollback(); db.Close() }, nil
}
