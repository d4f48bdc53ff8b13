package home

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// projectionTables are the tables of thread_history_N.sqlite that hold a
// thread's projection, in the order Codex deletes them before it rewrites
// a rollout (thread_history::delete_thread; thread_realtime_items from
// history migration 5 on).
var projectionTables = []string{"thread_items", "thread_realtime_items", "thread_turns", "thread_history_projection_state"}

// ProjectionInfo is what the history database keeps of one thread.
type ProjectionInfo struct {
	DB     string
	Cursor Cursor
	Items  int
	Turns  int
}

// ProjectionOf reads a thread's projection cursor and row counts; nil when
// the home has no history database or the thread no cursor. A database
// without Codex's cursor table is a *SchemaError: Codex creates every
// table when it creates the file (thread_history migrations 0001-0004),
// so a file without it is another program's, or a newer schema whose
// cursor this version cannot find. An empty database has no projection.
func (h *Home) ProjectionOf(thread string) (*ProjectionInfo, error) {
	path := h.HistoryDB()
	if path == "" {
		return nil, nil
	}
	d, err := OpenDB(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var info *ProjectionInfo
	err = d.Read(func(tx *sql.Tx) error {
		if _, err := need(tx, path, "thread_history_projection_state", "thread_id", "next_rollout_byte_offset", "next_rollout_ordinal"); err != nil {
			var n int
			if tx.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n) == nil && n == 0 {
				return nil // an empty file, as Codex creates it before its migrations: nothing projected
			}
			return err
		}
		var c Cursor
		err = tx.QueryRow(`SELECT thread_id, next_rollout_byte_offset, next_rollout_ordinal FROM thread_history_projection_state WHERE thread_id = ?`, thread).Scan(&c.ThreadID, &c.Raw, &c.Ordinal)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		c.decode()
		info = &ProjectionInfo{DB: path, Cursor: c}
		for _, t := range []struct {
			table string
			n     *int
		}{{"thread_items", &info.Items}, {"thread_turns", &info.Turns}} {
			if cols, err := Columns(tx, t.table); err != nil || cols == nil {
				continue
			}
			if err := tx.QueryRow(`SELECT count(*) FROM `+t.table+` WHERE thread_id = ?`, thread).Scan(t.n); err != nil {
				return err
			}
		}
		return nil
	})
	return info, err
}

// SavedProjection is a thread's projection rows as they were stored, kept
// in an undo record so that the rows can be put back.
type SavedProjection struct {
	DB       string       `json:"db"` // the database's base name
	ThreadID string       `json:"thread_id"`
	Tables   []SavedTable `json:"tables"`
}

// SavedTable is the rows of one table, by column name.
type SavedTable struct {
	Name    string    `json:"name"`
	Columns []string  `json:"columns"`
	Rows    [][]Value `json:"rows"`
}

// Value is one SQLite value, typed so that it is stored back as it was
// (all nil: NULL).
type Value struct {
	Int  *int64   `json:"i,omitempty"`
	Real *float64 `json:"r,omitempty"`
	Text *string  `json:"t,omitempty"`
	Blob []byte   `json:"b,omitempty"`
}

func valueOf(v any) Value {
	switch x := v.(type) {
	case int64:
		return Value{Int: &x}
	case float64:
		return Value{Real: &x}
	case string:
		return Value{Text: &x}
	case []byte:
		if x == nil {
			x = []byte{}
		}
		return Value{Blob: x}
	case bool:
		n := int64(0)
		if x {
			n = 1
		}
		return Value{Int: &n}
	}
	return Value{}
}

func (v Value) arg() any {
	switch {
	case v.Int != nil:
		return *v.Int
	case v.Real != nil:
		return *v.Real
	case v.Text != nil:
		return *v.Text
	case v.Blob != nil:
		return v.Blob
	}
	return nil
}

// openRW opens the history database for the projection repair: writes
// wait for Codex's write transaction (busy timeout), and every
// transaction takes the write lock at BEGIN, as Codex's own do.
func openRW(path string) (*sql.DB, error) {
	if err := checkFiles(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("mode", "rw")
	q.Set("_txlock", "immediate")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", (2*BusyTimeout).Milliseconds()))
	db, err := sql.Open("sqlite", dsn(path, q))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// DeleteProjection removes a thread's projection in one transaction, as
// Codex does before it rewrites a rollout, after saving its rows: Codex
// projects the thread again from the file the next time it reads it.
// Nothing to delete: nil, nil.
func (h *Home) DeleteProjection(thread string) (*SavedProjection, error) {
	path := h.HistoryDB()
	if path == "" {
		return nil, nil
	}
	db, err := openRW(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer tx.Rollback()
	saved := &SavedProjection{DB: baseName(path), ThreadID: thread}
	any := false
	for _, table := range projectionTables {
		cols, err := Columns(tx, table)
		if err != nil {
			return nil, err
		}
		if cols == nil || !cols["thread_id"] {
			continue // not in this schema
		}
		st, err := saveRows(tx, table, thread)
		if err != nil {
			return nil, fmt.Errorf("%s: saving %s: %w", path, table, err)
		}
		if len(st.Rows) == 0 {
			continue
		}
		any = true
		saved.Tables = append(saved.Tables, st)
		if _, err := tx.Exec(`DELETE FROM `+table+` WHERE thread_id = ?`, thread); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if !any {
		return nil, nil
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return saved, nil
}

func saveRows(tx *sql.Tx, table, thread string) (SavedTable, error) {
	st := SavedTable{Name: table}
	rows, err := tx.Query(`SELECT * FROM `+table+` WHERE thread_id = ? ORDER BY rowid`, thread)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	if st.Columns, err = rows.Columns(); err != nil {
		return st, err
	}
	for rows.Next() {
		vals := make([]any, len(st.Columns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return st, err
		}
		row := make([]Value, len(vals))
		for i, v := range vals {
			row[i] = valueOf(v)
		}
		st.Rows = append(st.Rows, row)
	}
	return st, rows.Err()
}

// RestoreProjection puts saved rows back in one transaction, replacing
// whatever projection of the thread Codex built since (it was made from
// the file the undo replaces).
func (h *Home) RestoreProjection(s *SavedProjection) error {
	if s == nil || len(s.Tables) == 0 {
		return nil
	}
	path := h.HistoryDB()
	if path == "" || baseName(path) != s.DB {
		return fmt.Errorf("the history database %s the projection was saved from is not in %s", s.DB, h.Dir)
	}
	db, err := openRW(path)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer tx.Rollback()
	for _, table := range projectionTables {
		if cols, err := Columns(tx, table); err != nil {
			return err
		} else if cols != nil && cols["thread_id"] {
			if _, err := tx.Exec(`DELETE FROM `+table+` WHERE thread_id = ?`, s.ThreadID); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	for _, st := range s.Tables {
		if !isProjectionTable(st.Name) {
			return fmt.Errorf("the saved projection names table %q, not one of Codex's projection tables", st.Name)
		}
		cols, err := Columns(tx, st.Name)
		if err != nil {
			return err
		}
		for _, c := range st.Columns {
			if !cols[c] {
				return fmt.Errorf("%s: table %s has no column %q the saved rows have: its schema changed since", path, st.Name, c)
			}
		}
		tid := -1
		for i, c := range st.Columns {
			if c == "thread_id" {
				tid = i
			}
		}
		if tid < 0 {
			return fmt.Errorf("the saved rows of %s have no thread_id", st.Name)
		}
		for _, row := range st.Rows {
			if len(row) != len(st.Columns) || row[tid].Text == nil || *row[tid].Text != s.ThreadID {
				return fmt.Errorf("a saved row of %s is not thread %s's: refusing the rows", st.Name, s.ThreadID)
			}
		}
		quoted := make([]string, len(st.Columns))
		marks := make([]string, len(st.Columns))
		for i, c := range st.Columns {
			quoted[i] = `"` + strings.ReplaceAll(c, `"`, `""`) + `"`
			marks[i] = "?"
		}
		stmt := `INSERT INTO ` + st.Name + ` (` + strings.Join(quoted, ", ") + `) VALUES (` + strings.Join(marks, ", ") + `)`
		for _, row := range st.Rows {
			if len(row) != len(st.Columns) {
				return fmt.Errorf("a saved row of %s has %d values for %d columns", st.Name, len(row), len(st.Columns))
			}
			args := make([]any, len(row))
			for i, v := range row {
				args[i] = v.arg()
			}
			if _, err := tx.Exec(stmt, args...); err != nil {
				return fmt.Errorf("%s: restoring %s: %w", path, st.Name, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func isProjectionTable(name string) bool {
	for _, t := range projectionTables {
		if t == name {
			return true
		}
	}
	return false
}
