//go:build unix

package home_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
)

// The home fixtures (fixtures/home/README.md): a home Codex made, then one
// change, and the complete list of findings the change must produce.
var fixturesDir = homegen.Dir()

func buildHome(t *testing.T, base string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "codex-home")
	if err := homegen.Build(dir, base); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func runSQL(t *testing.T, path, script string) {
	t.Helper()
	if err := homegen.Exec(path, script); err != nil {
		t.Fatal(err)
	}
}

// holdLock takes a thread's writer lock as Codex does (flock, pid=N) and
// returns its release.
func holdLock(t *testing.T, dir, thread string) {
	t.Helper()
	path := filepath.Join(dir, home.WriterLocksDir, thread+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "pid=%d\n", os.Getpid())
	t.Cleanup(func() { f.Close() })
}

type fixture struct {
	name  string
	setup []string
	files map[string][]byte
	want  []string
}

func loadFixtures(t *testing.T) []fixture {
	paths, err := filepath.Glob(filepath.Join(fixturesDir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixturesDir, err)
	}
	var out []fixture
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fx := fixture{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), files: map[string][]byte{}}
		for _, f := range ar.Files {
			switch {
			case f.Name == "setup":
				fx.setup = contentLines(f.Data)
			case f.Name == "want":
				fx.want = contentLines(f.Data)
			case strings.HasPrefix(f.Name, "files/"):
				fx.files[strings.TrimPrefix(f.Name, "files/")] = f.Data
			default:
				t.Fatalf("%s: unknown section %q", p, f.Name)
			}
		}
		out = append(out, fx)
	}
	return out
}

func contentLines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// apply runs one setup line on the home.
func apply(t *testing.T, dir string, fx fixture, line string) {
	t.Helper()
	verb, rest, _ := strings.Cut(line, " ")
	p := func(s string) string { return filepath.Join(dir, filepath.FromSlash(s)) }
	switch verb {
	case "state", "history": // SQL on state_5 / thread_history_1
		db := map[string]string{"state": "state_5.sqlite", "history": "thread_history_1.sqlite"}[verb]
		runSQL(t, p(db), strings.ReplaceAll(rest, "@HOME@", dir))
	case "rm":
		if err := os.Remove(p(rest)); err != nil {
			t.Fatal(err)
		}
	case "mv":
		from, to, _ := strings.Cut(rest, " ")
		if err := os.MkdirAll(filepath.Dir(p(to)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p(from), p(to)); err != nil {
			t.Fatal(err)
		}
	case "truncate":
		name, n, _ := strings.Cut(rest, " ")
		size, _ := strconv.ParseInt(n, 10, 64)
		if err := os.Truncate(p(name), size); err != nil {
			t.Fatal(err)
		}
	case "write": // a files/ section to a path of the home
		if err := writeFile(p(rest), fx.files[rest]); err != nil {
			t.Fatal(err)
		}
	case "lock":
		holdLock(t, dir, rest)
	case "stale-lock": // a lock file nobody holds, naming a pid
		id, pid, _ := strings.Cut(rest, " ")
		writeFile(p(home.WriterLocksDir+"/"+id+".lock"), []byte("pid="+pid+"\n"))
	default:
		t.Fatalf("unknown setup verb %q", verb)
	}
}

var updateEvidence = flag.Bool("update-evidence", false, "rewrite testdata/evidence.txt (only to record an added field)")

// evidenceKeys records the "key type" list of a finding's JSON evidence.
func evidenceKeys(t *testing.T, keys map[string]map[string]bool, f checks.Finding) {
	b, err := json.Marshal(f.EvidenceMap())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if keys[f.Rule] == nil {
		keys[f.Rule] = map[string]bool{}
	}
	for k, v := range m {
		typ := map[byte]string{'"': "string", '{': "object", '[': "array", 't': "bool", 'f': "bool", 'n': "null"}[v[0]]
		if typ == "" {
			typ = "number"
		}
		keys[f.Rule][k+" "+typ] = true
	}
}

// TestFixtures: each drift is found by its rule on the right file and
// line, and nothing else is.
func TestFixtures(t *testing.T) {
	keys := map[string]map[string]bool{}
	defer func() { pinEvidence(t, keys) }()
	for _, fx := range loadFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			base, setup := homegen.Base, fx.setup
			if len(setup) > 0 && strings.HasPrefix(setup[0], "base ") {
				base, setup = strings.TrimPrefix(setup[0], "base "), setup[1:]
			}
			dir := buildHome(t, base)
			for _, l := range setup {
				apply(t, dir, fx, l)
			}
			fds, rep := filetest.HomeFindings(t, dir)
			var got []string
			for _, fd := range fds {
				evidenceKeys(t, keys, fd)
				rel, _ := filepath.Rel(dir, fd.Path)
				got = append(got, fmt.Sprintf("%s %d %s %s", filepath.ToSlash(rel), fd.Line, fd.Rule, fd.Severity))
				if strings.Contains(fd.Message, "%!") {
					t.Errorf("bad message: %s", fd.Message)
				}
			}
			want := slices.Clone(fx.want)
			for i, w := range want { // the severity may be left out
				if f := strings.Fields(w); len(f) == 3 {
					r, _ := checks.Lookup(f[2])
					if r == nil {
						t.Fatalf("want names unknown rule %s", f[2])
					}
					want[i] = w + " " + r.Severity.String()
				}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("findings (-want +got):\n%s\nnotes: %v", d, rep.Notes)
			}
			if len(rep.Notes) > 0 {
				t.Errorf("notes on a readable home: %v", rep.Notes)
			}
		})
	}
}

// pinEvidence compares the evidence keys of the home rules with
// testdata/evidence.txt: the JSON report is additive, a key is never
// renamed or removed. Every home rule must appear.
func pinEvidence(t *testing.T, keys map[string]map[string]bool) {
	if t.Failed() {
		return
	}
	got := filetest.KeyLines(keys)
	const golden = "testdata/evidence.txt"
	if *updateEvidence {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(strings.Split(strings.TrimSpace(string(b)), "\n"), got); d != "" {
		t.Errorf("evidence keys changed (-%s +got); an added key is recorded with -update-evidence:\n%s", golden, d)
	}
	for _, r := range checks.Rules() {
		if r.Area() == "home" && keys[r.ID] == nil {
			t.Errorf("%s: no home fixture finding, so its evidence is not pinned", r.ID)
		}
	}
}
