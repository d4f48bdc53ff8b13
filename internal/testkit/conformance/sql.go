package conformance

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rollout-dev/rollout/internal/codex/home"
)

// sqlStep runs the read-only query of a "sql" step (Args: DATABASE QUERY)
// on a database of the home and returns its rows as the step's output,
// one line each, the columns joined by '|' (NULL as "NULL"), as sqlite3
// prints them. It opens the database as rollout does (home.OpenDB: no
// side file created, nothing written).
func sqlStep(h *Home, args []string) (*Run, error) {
	if len(args) != 2 || strings.ContainsAny(args[0], `/\`) {
		return nil, fmt.Errorf("sql wants DATABASE QUERY (a file name of the home), got %q", args)
	}
	d, err := home.OpenDB(filepath.Join(h.Dir, args[0]))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var out strings.Builder
	err = d.Read(func(tx *sql.Tx) error {
		rows, err := tx.Query(args[1])
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			for i, v := range vals {
				if i > 0 {
					out.WriteByte('|')
				}
				if v.Valid {
					out.WriteString(v.String)
				} else {
					out.WriteString("NULL")
				}
			}
			out.WriteByte('\n')
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return &Run{Args: append([]string{"sql"}, args...), Stdout: out.String()}, nil
}
