// Package sweep moves the artifacts older rollouts left inside Codex's
// trees to the store, or removes artifacts (rollout artifacts --move,
// --remove). It sits in the edit stage beside repair and reclaim: each
// rollout's artifacts are moved or removed holding its lock (package
// inplace), so no repair or reclaim is making or reading them meanwhile.
// It never prints: Move returns what happened.
package sweep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
)

// Result is what Move did.
type Result struct {
	Done int // artifacts moved or removed
	// Errors, in order: a rollout whose lock is held (an
	// *inplace.Refusal: its artifacts are left alone), or an artifact that
	// could not be moved or removed.
	Errors []error
}

// Move moves the strays among found to their rollout's place in the store,
// never over a file there (a temporary file is removed instead); with
// remove, it removes every artifact found. It goes one rollout at a time,
// holding its lock.
func Move(found []artifacts.Found, remove bool) Result {
	var res Result
	byRollout := map[string][]artifacts.Found{}
	var order []string
	for _, f := range found {
		if !remove && !f.Stray {
			continue
		}
		if _, ok := byRollout[f.Rollout]; !ok {
			order = append(order, f.Rollout)
		}
		byRollout[f.Rollout] = append(byRollout[f.Rollout], f)
	}
	for _, r := range order {
		g, err := inplace.Lock(r)
		var busy *inplace.Refusal
		if errors.As(err, &busy) {
			res.Errors = append(res.Errors, err)
			continue
		}
		for _, f := range byRollout[r] {
			if err := moveOrRemove(f, remove); err != nil {
				res.Errors = append(res.Errors, err)
				continue
			}
			res.Done++
		}
		g.Release() // nil when the rollout is gone: nothing to hold
		if p, err := artifacts.For(r); err == nil {
			p.Tidy()
		}
	}
	return res
}

// moveOrRemove moves a stray to its rollout's place (never over a file
// there), or removes an artifact.
func moveOrRemove(f artifacts.Found, remove bool) error {
	dst, err := f.Destination()
	if remove || f.Kind == artifacts.KindTemp {
		if err := removeFound(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	p, err := artifacts.For(f.Rollout)
	if err != nil {
		return err
	}
	// The store's directories are checked and the link made relative to
	// them: never through a directory another user swapped meanwhile.
	d, err := p.Open(true)
	if err != nil {
		return err
	}
	defer d.Close()
	// A hard link then the removal: the name in the store is never
	// replaced, and the file is never in neither place.
	if err := d.LinkFrom(f.Path, filepath.Base(dst)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %s already exists: left where it is", f.Path, dst)
		}
		return fmt.Errorf("moving %s to %s: %w", f.Path, filepath.Dir(dst), err)
	}
	return os.Remove(f.Path)
}

// removeFound removes an artifact: one in the store relative to the store
// directory checked as artifacts.Place.Open says; a stray (in Codex's
// trees) or one of no known rollout by its path.
func removeFound(f artifacts.Found) error {
	p, err := artifacts.For(f.Rollout)
	if f.Stray || f.Rollout == "" || err != nil || !p.InHome() || filepath.Dir(f.Path) != filepath.Clean(p.Dir) {
		return os.Remove(f.Path)
	}
	d, err := p.Open(false)
	if err != nil {
		return err
	}
	if d == nil {
		return fs.ErrNotExist
	}
	defer d.Close()
	return d.Remove(filepath.Base(f.Path))
}
