package report

import (
	"bufio"
	"fmt"
	"io"

	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
)

// WriteArtifacts writes the listing of rollout artifacts: a line per
// file (kind, size, path, and a hint for a stray), then the totals.
func WriteArtifacts(w io.Writer, found []artifacts.Found) error {
	bw := bufio.NewWriter(w)
	var total int64
	strays := 0
	for _, f := range found {
		total += f.Size
		where := ""
		if f.Stray {
			where = "  (inside Codex's trees: rollout artifacts --move)"
			strays++
		}
		fmt.Fprintf(bw, "%-15s %10s  %s%s\n", f.Kind, Size(f.Size), termsafe.String(f.Path), where)
	}
	fmt.Fprintf(bw, "%s, %s", Count(len(found), "artifact"), Size(total))
	if strays > 0 {
		fmt.Fprintf(bw, "; %d inside sessions/ or archived_sessions/", strays)
	}
	if len(found) == 0 {
		fmt.Fprint(bw, ": nothing to list; repair --write and reclaim --write leave backups, quarantines, undo records and archives, and none is there")
	}
	fmt.Fprintln(bw)
	return bw.Flush()
}

// WriteNothingToMove is artifacts --move's answer when no artifact is a
// stray.
func WriteNothingToMove(w io.Writer) error {
	_, err := fmt.Fprintln(w, "nothing to move: no artifact is inside sessions/ or archived_sessions/")
	return err
}

// WriteArtifactsMoved is the last line of artifacts --move or --remove:
// how many artifacts it moved or removed.
func WriteArtifactsMoved(w io.Writer, done int, removed bool) error {
	verb := "moved to the store"
	if removed {
		verb = "removed"
	}
	_, err := fmt.Fprintf(w, "%s %s\n", Count(done, "artifact"), verb)
	return err
}
