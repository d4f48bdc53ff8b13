package home

import (
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// openRW opens a database for writing, as Codex does (WAL mode).
func openCodexRW(t *testing.T, path string) *sql.DB {
	t.Helper()
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(2000)")
	q.Add("_pragma", "journal_mode(wal)")
	db, err := sql.Open("sqlite", dsn(path, q))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func exec(t *testing.T, db interface {
	Exec(string, ...any) (sql.Result, error)
}, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestReadWhileCodexWrites: a write transaction held open by another
// connection neither blocks the reader nor shows it uncommitted rows, and
// the reader leaves the files as they were.
func TestReadWhileCodexWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state_5.sqlite")
	w := openCodexRW(t, path)
	exec(t, w, `CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, archived INTEGER NOT NULL DEFAULT 0)`,
		`INSERT INTO threads (id, rollout_path) VALUES ('a', '/x/a.jsonl')`)
	tx, err := w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	exec(t, tx, `INSERT INTO threads (id, rollout_path) VALUES ('b', '/x/b.jsonl')`)
	before := stampOf(path)
	d, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.immutable {
		t.Fatal("opened immutable although a -wal exists")
	}
	ths, err := threads(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(ths) != 1 || ths[0].ID != "a" || ths[0].HistoryMode != "" || !ths[0].HasArchived {
		t.Fatalf("threads = %+v, want only the committed row a", ths)
	}
	if after := stampOf(path); after != before {
		t.Errorf("the reader changed the database files: %s -> %s", before, after)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	ths, err = threads(d)
	if err != nil || len(ths) != 2 {
		t.Fatalf("after commit: %+v, %v", ths, err)
	}
}

// TestReadCheckpointedLeavesNoFiles: a database with no -wal is read
// without creating one (or a -shm) beside it.
func TestReadCheckpointedLeavesNoFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state_5.sqlite")
	w := openCodexRW(t, path)
	exec(t, w, `CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL)`,
		`INSERT INTO threads VALUES ('a', '/x/a.jsonl')`)
	w.Close() // the last connection checkpoints and removes the WAL
	if exists(path + "-wal") {
		t.Fatal("setup: -wal still there")
	}
	d, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	ths, err := threads(d)
	d.Close()
	if err != nil || len(ths) != 1 {
		t.Fatalf("threads %+v, %v", ths, err)
	}
	for _, suf := range []string{"-wal", "-shm", "-journal"} {
		if exists(path + suf) {
			t.Errorf("reading left %s behind", suf)
		}
	}
}

// TestReadDuringChangeRereads: an immutable read that races a writer is
// done again in read-only mode and sees the committed state.
func TestReadDuringChangeRereads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state_5.sqlite")
	w := openCodexRW(t, path)
	exec(t, w, `CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL)`)
	w.Close()
	d, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	w2 := openCodexRW(t, path)
	first := true
	var n int
	err = d.Read(func(tx *sql.Tx) error {
		if first { // Codex starts and writes while we read
			exec(t, w2, `INSERT INTO threads VALUES ('a', '/x/a.jsonl')`)
			first = false
		}
		return tx.QueryRow(`SELECT count(*) FROM threads`).Scan(&n)
	})
	if err != nil || n != 1 || d.immutable {
		t.Fatalf("count %d, immutable %v, err %v: want the reread to see the new row", n, d.immutable, err)
	}
}

// TestUnknownSchema: a threads table without rollout_path is a schema
// error naming the column, not a failure to read.
func TestUnknownSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state_9.sqlite")
	w := openCodexRW(t, path)
	exec(t, w, `CREATE TABLE threads (id TEXT PRIMARY KEY, path TEXT)`)
	d, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = threads(d)
	if !isSchema(err) {
		t.Fatalf("err = %v, want a SchemaError", err)
	}
}

// TestThreadsAcrossSchemas: the threads table of each era reads, the
// columns a later Codex added as their zero value: before history_mode
// (state migration 0040), before the creator and attached-parent columns
// (absent from 0.154.0, present in 0.169.0 and 0.171.0), and with them.
func TestThreadsAcrossSchemas(t *testing.T) {
	const (
		parent = "01a23661-7f82-7f43-a659-85d5ccddb1b0"
		child  = "01a23661-8dec-7481-83e1-4266d20832e7"
	)
	for _, tt := range []struct {
		name, create, insert string
		want                 []Thread
	}{
		{"no archived column", `CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL)`,
			`INSERT INTO threads VALUES ('` + parent + `', '/h/p.jsonl')`,
			[]Thread{{ID: parent, RolloutPath: "/h/p.jsonl"}}},
		{"history_mode, no attached", `CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, archived INTEGER NOT NULL DEFAULT 0, history_mode TEXT NOT NULL DEFAULT 'legacy')`,
			`INSERT INTO threads (id, rollout_path, history_mode) VALUES ('` + parent + `', '/h/p.jsonl', 'paginated')`,
			[]Thread{{ID: parent, RolloutPath: "/h/p.jsonl", HistoryMode: "paginated", HasArchived: true}}},
		{"attached and creator", `CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, archived INTEGER NOT NULL DEFAULT 0, history_mode TEXT NOT NULL DEFAULT 'legacy', creator_user_id TEXT, creator_account_id TEXT, attached_thread_parent_id TEXT)`,
			`INSERT INTO threads (id, rollout_path, history_mode) VALUES ('` + parent + `', '/h/p.jsonl', 'paginated');
			 INSERT INTO threads VALUES ('` + child + `', '/h/c.jsonl', 0, 'paginated', 'user-1', 'acct-1', '` + parent + `')`,
			[]Thread{{ID: parent, RolloutPath: "/h/p.jsonl", HistoryMode: "paginated", HasArchived: true},
				{ID: child, RolloutPath: "/h/c.jsonl", HistoryMode: "paginated", HasArchived: true, AttachedTo: parent, CreatorUserID: "user-1", CreatorAccountID: "acct-1"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state_5.sqlite")
			w := openCodexRW(t, path)
			exec(t, w, tt.create, tt.insert)
			d, err := OpenDB(path)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			got, err := threads(d)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("threads (-want +got):\n%s", diff)
			}
		})
	}
}
