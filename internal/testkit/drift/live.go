package drift

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	_ "modernc.org/sqlite" // the pure-Go driver the home reader uses

	"github.com/rollout-dev/rollout/internal/testkit/conformance"
)

// LiveScenarios are the conformance scenarios the live source runs (those
// a version supports): turns, tool calls, plans, reasoning, a local and a
// remote compaction.
var LiveScenarios = []string{"turns3", "compact-local", "compact-remote"}

// Live runs the scenarios with Codex c against the mock in fresh homes
// under work and notes every rollout and database they leave.
func (o *Observed) Live(ctx context.Context, c *conformance.Codex, work string) error {
	m := conformance.NewMock()
	defer m.Close()
	for _, sc := range conformance.Scenarios {
		if !contains(LiveScenarios, sc.Name) || !sc.RunsOn(c.Version) {
			continue
		}
		dir := filepath.Join(work, sc.Name)
		s, err := conformance.Generate(ctx, c, m, sc, dir, conformance.GoldenDir)
		if err != nil {
			return fmt.Errorf("drift: %s %s: %w", c.Version, sc.Name, err)
		}
		if err := o.AddHome(s.Home.Dir, sc.Name); err != nil {
			return err
		}
	}
	return nil
}

// AddHome notes the rollouts (sessions/, archived_sessions/) and the
// SQLite databases (*.sqlite at its top) of a Codex home; label prefixes
// the examples.
func (o *Observed) AddHome(dir, label string) error {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case strings.HasSuffix(p, ".jsonl") && strings.HasPrefix(filepath.Base(p), "rollout-"):
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return o.AddRollout(f, label+":"+filepath.Base(p))
		case strings.HasSuffix(p, ".sqlite") && filepath.Dir(rel) == ".":
			tables, err := Schema(p)
			if err != nil {
				return err
			}
			o.AddSchema(tables, label+":"+rel)
		}
		return nil
	})
	return err
}

// Schema reads the tables of a SQLite database and their columns
// (sqlite_master, pragma table_info), read-only; SQLite's own tables are
// left out.
func Schema(path string) (map[string][]string, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, fmt.Errorf("drift: schema of %s: %w", path, err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, t)
	}
	rows.Close()
	out := map[string][]string{}
	for _, t := range tables {
		cols, err := db.Query(`SELECT name FROM pragma_table_info(?)`, t)
		if err != nil {
			return nil, fmt.Errorf("drift: columns of %s in %s: %w", t, path, err)
		}
		out[t] = []string{}
		for cols.Next() {
			var c string
			if err := cols.Scan(&c); err != nil {
				cols.Close()
				return nil, err
			}
			out[t] = append(out[t], c)
		}
		cols.Close()
	}
	return out, nil
}

// Binary finds the native Codex executable of an installed version: the
// npm package's launcher is a script; the ELF for this machine's
// architecture lies under node_modules/@openai.
func Binary(version string) (string, error) {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	root := filepath.Join(conformance.CacheDir(), version, "node_modules", "@openai")
	var found string
	var size int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "codex" || !strings.Contains(p, arch+"-unknown-linux") {
			return err
		}
		fi, err := d.Info()
		if err == nil && fi.Size() > size {
			found, size = p, fi.Size()
		}
		return err
	})
	if err == nil && found == "" {
		err = fmt.Errorf("drift: no %s Linux codex binary under %s", arch, root)
	}
	return found, err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Observe installs version (conformance.Install: the shared cache), runs
// the live scenarios in a scratch directory and reads its binary's
// strings.
func Observe(ctx context.Context, version string) (*Observed, error) {
	c, err := conformance.Install(ctx, version)
	if err != nil {
		return nil, err
	}
	o := NewObserved(version)
	work, err := conformance.NewCaseDir()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	if err := o.Live(ctx, c, work); err != nil {
		return nil, err
	}
	return o, o.fromBinary(version)
}

// StringsAgain replaces what the strings source found with what the
// installed binary of version shows now.
func (o *Observed) StringsAgain(version string) error {
	for _, names := range o.Names {
		for n, s := range names {
			if s.Source == SourceStrings {
				delete(names, n)
			}
		}
	}
	return o.fromBinary(version)
}

func (o *Observed) fromBinary(version string) error {
	bin, err := Binary(version)
	if err != nil {
		return err
	}
	f, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	return o.FromStrings(f)
}
