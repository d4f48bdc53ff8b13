package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

// Real-shaped homes (issue 38): Codex homes of N rollouts cut from the
// files real Codex CLIs wrote for the conformance scenarios
// (internal/testkit/conformance/testdata/VERSION/SCENARIO/session), so
// their records are what Codex writes, forks, sub-agents and reverts
// included, with a state database whose threads table has a row per
// thread (fixtures/home's base home made by Codex 0.171.0, its row copied).
type homesSpec struct {
	Version   int    `json:"version"`
	Seed      uint64 `json:"seed"`
	Rollouts  int    `json:"rollouts"`
	Median    int64  `json:"median"`
	SigmaX100 int    `json:"sigma_x100"`
	Max       int64  `json:"max"`
}

const homesVersion = 1

const homesStamp = ".benchtool-home.json"

// homeDir is where the home of n rollouts is written under DIR.
func homeDir(dir string, n int) string { return filepath.Join(dir, "homes", fmt.Sprintf("home-%d", n)) }

func cmdHomesGen(args []string) error {
	fs := flag.NewFlagSet("homes-gen", flag.ContinueOnError)
	dir := fs.String("o", "", "output directory (required); homes go to DIR/homes/home-N")
	sizes := fs.String("rollouts", "2000", "comma-separated rollout counts, one home each")
	median := fs.String("median", "20KB", "median rollout size (log-normal; a template grows by repeating its turns)")
	maxSize := fs.String("max", "4MB", "largest rollout")
	sigma := fs.Int("sigma", 100, "log-normal sigma of the sizes, times 100")
	seed := fs.Uint64("seed", 1, "generator seed")
	force := fs.Bool("force", false, "regenerate even if the stamp matches")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	counts, err := parseCounts(*sizes)
	if *dir == "" || fs.NArg() > 0 || err != nil {
		fmt.Fprintln(os.Stderr, "usage: benchtool homes-gen -o DIR [-rollouts 2000,50000] [-median 20KB] [-max 4MB] [-sigma 100] [-seed 1]")
		return exitError(2)
	}
	s := homesSpec{Version: homesVersion, Seed: *seed, SigmaX100: *sigma}
	if s.Median, err = parseSize(*median); err != nil {
		return err
	}
	if s.Max, err = parseSize(*maxSize); err != nil {
		return err
	}
	tpl, err := loadTemplates(conformanceTestdata())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(*dir, "homes"), 0o755); err != nil {
		return err
	}
	unlock, err := lockDir(*dir, true)
	if err != nil {
		return err
	}
	defer unlock()
	for _, n := range counts {
		s.Rollouts = n
		home := homeDir(*dir, n)
		if b, err := os.ReadFile(filepath.Join(home, homesStamp)); err == nil && !*force {
			var old homesSpec
			if json.Unmarshal(b, &old) == nil && old == s {
				fmt.Printf("%s: up to date\n", home)
				continue
			}
		}
		if err := os.RemoveAll(home); err != nil {
			return err
		}
		start := time.Now()
		st, err := writeHome(home, s, tpl)
		if err != nil {
			return fmt.Errorf("%s: %w", home, err)
		}
		fmt.Printf("%s: %d rollouts, %d threads rows, %s, generated in %.1fs\n", home, st.files, st.threads, fmtMB(st.bytes), time.Since(start).Seconds())
		b, _ := json.MarshalIndent(s, "", "  ")
		if err := os.WriteFile(filepath.Join(home, homesStamp), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("invalid rollout count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// conformanceTestdata is the conformance goldens' directory of this checkout.
func conformanceTestdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "conformance", "testdata")
}

// homeTemplate is the session directory of one conformance case: the
// rollouts one scenario made, which may continue one another (a fork names
// its parent's id and a byte offset in it), so they are copied together.
type homeTemplate struct {
	name  string
	files []templateFile
	ids   []string // the thread and rollout ids in the file names
}

type templateFile struct {
	rel  string // slash path under the home
	data []byte
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func loadTemplates(root string) ([]homeTemplate, error) {
	sessions, err := filepath.Glob(filepath.Join(root, "*", "*", "session"))
	if err != nil {
		return nil, err
	}
	var out []homeTemplate
	for _, dir := range sessions {
		t := homeTemplate{name: strings.TrimPrefix(filepath.ToSlash(filepath.Dir(dir)), filepath.ToSlash(root)+"/")}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "rollout-") || !strings.HasSuffix(d.Name(), ".jsonl") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			t.files = append(t.files, templateFile{filepath.ToSlash(rel), b})
			for _, id := range uuidRE.FindAllString(d.Name(), -1) {
				if !slices.Contains(t.ids, id) {
					t.ids = append(t.ids, id)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(t.files) > 0 {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Codex-made rollouts under %s", root)
	}
	return out, nil
}

type homeStats struct {
	files, threads int
	bytes          int64
}

// writeHome lays out the base home, then copies templates with fresh ids
// until the home holds s.Rollouts rollouts. A template of one file grows
// to its drawn size by repeating its records after session_meta (ids
// suffixed per copy, so calls still pair and no id repeats); a template of
// several files is copied as it is, so the byte offsets one file keeps
// into another stay true.
func writeHome(home string, s homesSpec, tpl []homeTemplate) (homeStats, error) {
	var st homeStats
	if err := homegen.Build(home, homegen.Base); err != nil {
		return st, err
	}
	st.files, st.threads = 1, 1
	rng := rand.New(rand.NewPCG(s.Seed, uint64(s.Rollouts)))
	sigma := float64(s.SigmaX100) / 100
	rows := map[string]string{} // thread id -> its newest rollout's path
	var order []string
	var buf []byte
	for copyN := 0; st.files < s.Rollouts; copyN++ {
		t := tpl[rng.IntN(len(tpl))]
		if len(t.files) > s.Rollouts-st.files {
			continue
		}
		ids := make([]string, 0, 2*len(t.ids))
		for _, id := range t.ids {
			ids = append(ids, id, freshID(id, rng))
		}
		repl := strings.NewReplacer(ids...)
		target := int64(min(max(float64(s.Median)*math.Exp(sigma*rng.NormFloat64()), 1e3), float64(s.Max)))
		for _, f := range t.files {
			rel := repl.Replace(f.rel)
			buf = append(buf[:0], repl.Replace(string(f.data))...)
			if len(t.files) == 1 {
				buf = grow(buf, target)
			}
			path := filepath.Join(home, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return st, err
			}
			if err := os.WriteFile(path, buf, 0o644); err != nil {
				return st, err
			}
			st.files++
			st.bytes += int64(len(buf))
			name := filepath.Base(rel)
			thread := uuidRE.FindString(name)
			if _, ok := rows[thread]; !ok {
				order = append(order, thread)
			}
			if old, ok := rows[thread]; !ok || filepath.Base(old) < name {
				rows[thread] = path
			}
		}
	}
	st.threads += len(order)
	return st, insertThreads(filepath.Join(home, "state_5.sqlite"), order, rows)
}

// freshID keeps a UUIDv7's time (its first 48 bits) and draws the rest.
func freshID(id string, rng *rand.Rand) string {
	const hex = "0123456789abcdef"
	b := []byte(id)
	for i := 14; i < len(b); i++ {
		if b[i] != '-' {
			b[i] = hex[rng.IntN(16)]
		}
	}
	b[14], b[19] = '7', "89ab"[rng.IntN(4)]
	return string(b)
}

var idFieldRE = regexp.MustCompile(`"(id|turn_id|call_id|item_id)":"([^"]*)"`)

// grow appends copies of the records after session_meta until the file
// reaches target bytes, each copy's ids suffixed with its number.
func grow(b []byte, target int64) []byte {
	first := bytes.IndexByte(b, '\n')
	if first < 0 || first == len(b)-1 {
		return b
	}
	body := b[first+1:]
	if !bytes.HasSuffix(body, []byte("\n")) {
		return b
	}
	body = slices.Clone(body)
	for k := 2; int64(len(b)) < target; k++ {
		suffix := "-" + strconv.Itoa(k)
		b = append(b, idFieldRE.ReplaceAll(body, []byte(`"$1":"${2}`+suffix+`"`))...)
	}
	return b
}

// insertThreads adds a threads row per thread, a copy of the base home's
// row (what Codex 0.171.0 wrote) with the thread's id and rollout path.
func insertThreads(db string, order []string, rows map[string]string) error {
	h, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer h.Close()
	h.SetMaxOpenConns(1)
	tx, err := h.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`CREATE TEMP TABLE tpl AS SELECT * FROM threads WHERE id = ?`, homegen.Thread); err != nil {
		return err
	}
	upd, err := tx.Prepare(`UPDATE tpl SET id = ?, rollout_path = ?`)
	if err != nil {
		return err
	}
	ins, err := tx.Prepare(`INSERT INTO threads SELECT * FROM tpl`)
	if err != nil {
		return err
	}
	for _, id := range order {
		if _, err := upd.Exec(id, rows[id]); err != nil {
			return err
		}
		if _, err := ins.Exec(); err != nil {
			return fmt.Errorf("threads row %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	var n int
	if err := h.QueryRow(`SELECT count(*) FROM threads`).Scan(&n); err != nil {
		return err
	}
	if n != len(order)+1 {
		return errors.New("threads rows missing after insert")
	}
	return nil
}
