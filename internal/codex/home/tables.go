package home

import (
	"database/sql"
	"math"
	"sort"
	"strings"
)

// Thread is a row of the threads table of state_N.sqlite: what the resume
// picker and the app list.
type Thread struct {
	ID          string
	RolloutPath string
	// HistoryMode is "legacy" or "paginated"; "" when the schema predates
	// the column (state migration 0040).
	HistoryMode string
	Archived    bool
	HasArchived bool // the schema has the archived column
	// AttachedTo is the thread this one is attached to as a side
	// conversation (threads.attached_thread_parent_id, Codex 0.171: state
	// migration 62 "threads attached parent"); "" when it is not attached
	// or the schema predates the column.
	AttachedTo string
	// CreatorUserID and CreatorAccountID name who made the thread (state
	// migration 56 "threads creator identity"); "" when unset or older.
	CreatorUserID, CreatorAccountID string
}

// threads reads the threads table by column name: a column a version of
// Codex added later reads as its zero value on an older database.
func threads(d *DB) ([]Thread, error) { return selectThreads(d, nil, false) }

// where is the filter of a threads query, given the table's columns: an
// SQL condition and its arguments ("": every row).
type where func(cols map[string]bool) (cond string, args []any)

// selectThreads reads the rows of the threads table that w selects, by id.
// Rows are scanned one at a time and only those selected are kept: the
// table can hold hundreds of thousands of rows, and a row's rollout_path
// is as long as a path can be (issue 36 measured 327 MiB reading 300 rows
// of 1 MiB paths whole to find one id). sortAfter sorts the selected rows
// rather than walking the table in id order: for a filter that an index
// of its own answers (ORDER BY id would make SQLite scan every row by the
// primary key instead).
func selectThreads(d *DB, w where, sortAfter bool) ([]Thread, error) {
	var out []Thread
	err := d.Read(func(tx *sql.Tx) error {
		out = out[:0] // Read may run this twice
		cols, err := need(tx, d.Path, "threads", "id", "rollout_path")
		if err != nil {
			return err
		}
		ar := cols["archived"]
		sel := []string{"id", "rollout_path",
			optional(cols["history_mode"], "history_mode", "''"), optional(ar, "archived", "0"),
			optional(cols["attached_thread_parent_id"], "attached_thread_parent_id", "NULL"),
			optional(cols["creator_user_id"], "creator_user_id", "NULL"),
			optional(cols["creator_account_id"], "creator_account_id", "NULL")}
		q, args := `SELECT `+strings.Join(sel, ", ")+` FROM threads`, []any(nil)
		if w != nil {
			var cond string
			if cond, args = w(cols); cond != "" {
				q += ` WHERE ` + cond
			}
		}
		order := ` ORDER BY id`
		if sortAfter {
			order = ` ORDER BY +id` // '+': the order does not pick the index
		}
		rows, err := tx.Query(q+order, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t Thread
			var mode, attached, user, account sql.NullString
			var archived sql.NullInt64
			if err := rows.Scan(&t.ID, &t.RolloutPath, &mode, &archived, &attached, &user, &account); err != nil {
				return err
			}
			t.HistoryMode, t.Archived, t.HasArchived = historyMode(mode.String), archived.Int64 != 0, ar
			t.AttachedTo, t.CreatorUserID, t.CreatorAccountID = attached.String, user.String, account.String
			out = append(out, t)
		}
		return rows.Err()
	})
	return out, err
}

// openStateDB opens the home's state_N.sqlite: nil when it has none.
func (h *Home) openStateDB() (*DB, error) {
	path := h.StateDB()
	if path == "" {
		return nil, nil
	}
	return OpenDB(path)
}

// Threads reads the rows of the home's threads index, by id: none when
// the home has no state_N.sqlite.
func (h *Home) Threads() ([]Thread, error) {
	d, err := h.openStateDB()
	if d == nil || err != nil {
		return nil, err
	}
	defer d.Close()
	return threads(d)
}

// AttachedThreads reads the rows of the home's threads index that are
// attached to another thread (attached_thread_parent_id set), by id: none
// when the home has no state_N.sqlite or its schema predates the column.
func (h *Home) AttachedThreads() ([]Thread, error) {
	d, err := h.openStateDB()
	if d == nil || err != nil {
		return nil, err
	}
	defer d.Close()
	return selectThreads(d, func(cols map[string]bool) (string, []any) {
		if !cols["attached_thread_parent_id"] {
			return "0", nil
		}
		// Codex indexes the attached rows (idx_threads_attached_parent,
		// state migration 62): the few attached rows, not the table.
		return "attached_thread_parent_id IS NOT NULL AND attached_thread_parent_id <> ''", nil
	}, true)
}

// AttachedEdges maps each attached thread of the home's index to the
// thread it is attached to (attached_thread_parent_id); empty for a home
// without the index or the column.
func (h *Home) AttachedEdges() map[string]string {
	rows, _ := h.AttachedThreads()
	out := map[string]string{}
	for _, t := range rows {
		out[t.ID] = t.AttachedTo
	}
	return out
}

func optional(have bool, col, zero string) string {
	if have {
		return col
	}
	return zero
}

// Cursor is a thread's row of thread_history_projection_state: how far
// Codex has projected the rollout into thread_turns and thread_items.
type Cursor struct {
	ThreadID string
	// Offset is the byte offset of the first record not yet projected;
	// Ordinal the ordinal Codex expects there.
	Offset, Ordinal int64
	// Raw is the stored offset. Newer Codex versions store an incomplete
	// lineage as -1-offset and a legacy backfill in progress as the
	// largest integer (Pending).
	Raw     int64
	Pending bool
}

// cursors reads every projection cursor.
func cursors(d *DB) ([]Cursor, error) {
	var out []Cursor
	err := d.Read(func(tx *sql.Tx) error {
		if _, err := need(tx, d.Path, "thread_history_projection_state", "thread_id", "next_rollout_byte_offset", "next_rollout_ordinal"); err != nil {
			return err
		}
		rows, err := tx.Query(`SELECT thread_id, next_rollout_byte_offset, next_rollout_ordinal FROM thread_history_projection_state ORDER BY thread_id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c Cursor
			if err := rows.Scan(&c.ThreadID, &c.Raw, &c.Ordinal); err != nil {
				return err
			}
			c.decode()
			out = append(out, c)
		}
		return rows.Err()
	})
	return out, err
}

// Item is a row of thread_items: a copy of one item of the thread, made
// from the record at Ordinal.
type Item struct {
	TurnID, ItemID, Type string
	Ordinal              int64
}

// items reads the projected items of a thread, by ordinal.
func items(d *DB, threadID string) ([]Item, error) {
	var out []Item
	err := d.Read(func(tx *sql.Tx) error {
		cols, err := need(tx, d.Path, "thread_items", "thread_id", "item_id", "rollout_ordinal")
		if err != nil {
			return err
		}
		sel := "turn_id"
		if !cols["turn_id"] {
			sel = "''"
		}
		typ := "item_type"
		if !cols["item_type"] {
			typ = "''"
		}
		rows, err := tx.Query(`SELECT `+sel+`, item_id, `+typ+`, rollout_ordinal FROM thread_items WHERE thread_id = ? ORDER BY rollout_ordinal`, threadID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var it Item
			if err := rows.Scan(&it.TurnID, &it.ItemID, &it.Type, &it.Ordinal); err != nil {
				return err
			}
			out = append(out, it)
		}
		return rows.Err()
	})
	return out, err
}

// threadsByPrefix reads the threads rows whose id starts with prefix
// (case-insensitive), by id. Codex writes ids in lower case, so the rows
// are found through the table's primary key (id >= prefix AND id < the
// next prefix); an id stored with upper-case letters is still matched,
// by a scan that reads only the ids.
func threadsByPrefix(d *DB, prefix string) ([]Thread, error) {
	lo := strings.ToLower(prefix)
	hi, bounded := nextPrefix(lo)
	cond := func(col string) (string, []any) {
		if !bounded {
			return col + ` >= ?`, []any{lo}
		}
		return col + ` >= ? AND ` + col + ` < ?`, []any{lo, hi}
	}
	out, err := selectThreads(d, func(map[string]bool) (string, []any) { return cond("id") }, false)
	if err != nil {
		return nil, err
	}
	// An id whose lower case starts with prefix lies, in the primary key's
	// byte order, between the prefix in upper case and the next prefix
	// (upper-case letters sort first; SQLite's lower() changes ASCII
	// only): that range of the key is scanned, not every id.
	upper, err := selectThreads(d, func(map[string]bool) (string, []any) {
		c, args := cond("lower(id)")
		idRange, rangeArgs := cond("id")
		rangeArgs[0] = asciiUpper(lo)
		return `id <> lower(id) AND ` + idRange + ` AND ` + c, append(rangeArgs, args...)
	}, false)
	if err != nil || len(upper) == 0 {
		return out, err
	}
	out = append(out, upper...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// asciiUpper is s with its ASCII letters in upper case, as SQLite's
// upper() makes them.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// nextPrefix is the least string greater than every string starting with
// p; ok is false when there is none (p is empty or all 0xff bytes).
func nextPrefix(p string) (string, bool) {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

// decode sets Offset and Pending from Raw.
func (c *Cursor) decode() {
	c.Offset = c.Raw
	switch {
	case c.Raw == math.MaxInt64:
		c.Pending = true
	case c.Raw < 0:
		c.Offset = -1 - c.Raw
	}
}
