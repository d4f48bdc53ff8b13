package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/bloatgen"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/homegen"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/repairgen"
)

// TestDocOutputs runs every shell session of README.md and docs/*.md and
// compares what it prints with what the page shows, so that no shown
// output can drift from the binary. It is also the safety net: every
// fenced block is a session checked here, a block with a language tag
// (```sh commands, ```yaml, ```json, ```text: inputs and listings, not
// output), or a session another test checks (docs/ci.md: TestCIDocs);
// any other block fails the test.
//
// A session is a block whose first line starts with "$ ". Each page runs
// in a scratch directory holding copies of fixtures/ and
// cmd/rollout/testdata/*.jsonl, with HOME there too and ~/.codex holding
// the demo rollout (the README's find tour); F is the demo rollout, as the
// README says. Its blocks run in order and share that directory, as a
// reader following the page would. Lines of a session:
//
//   - "$ rollout ARGS" (or "$ go run ./cmd/rollout ARGS") runs rollout
//     in-process; "| head -N", "| tail -N" and "| sed -n 'A,Bp'" filter
//     its standard output; "  # ..." is a comment.
//   - "$ NAME=VALUE" sets a variable; VALUE may be "$(rollout ARGS)".
//   - "$ go run ./internal/testkit/fixturegen/PKG DIR" runs a fixture
//     command's function (fixtureCommands).
//   - "$ cat FILE" prints a file; "$ sed -n Np FILE" its line N;
//     "$ ln -s TARGET NAME" makes a symbolic link.
//   - "[exit N]" after the output asserts the exit code.
//   - the other lines are the output: standard output then standard
//     error (or the other way round), with the scratch directory's path
//     removed and HOME's written "~".
//
// The normalisation a page may use: "…" inside a line stands for any text
// (a long path shortened, a duration), and a line of only "…" for any
// number of lines. Commands never hold "…": what a page shows can be
// pasted.
//
// ROLLOUT_UPDATE_GOLDEN=1 rewrites the output of each failing session
// that uses no "…" with what the binary prints: a changed output is one
// regenerated block.
func TestDocOutputs(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	update := os.Getenv("ROLLOUT_UPDATE_GOLDEN") == "1"
	unchecked := map[string]bool{}
	for _, page := range pages {
		name, _ := filepath.Rel(root, page)
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(data)
		var env *docEnv
		for _, b := range fencedBlocksAt(doc) {
			where := fmt.Sprintf("%s:%d", name, b.line)
			switch {
			case b.lang != "":
				if env != nil && b.lang == "yaml" {
					env.writeConfig(b.text)
				}
				continue
			case !strings.HasPrefix(b.text, "$ "):
				t.Errorf("%s: a fenced block no test checks: tag it (```sh, ```text, ...) if it is not output, or show the command that prints it (\"$ rollout ...\")\n%s", where, headLines(b.text, 3))
				continue
			case name == filepath.Join("docs", "ci.md"):
				continue // TestCIDocs runs these in its CI work tree
			}
			if reason, ok := uncheckedSessions[name+": "+strings.SplitN(b.text, "\n", 2)[0]]; ok {
				unchecked[name+": "+strings.SplitN(b.text, "\n", 2)[0]] = true
				t.Logf("%s: not checked yet: %s", where, reason)
				continue
			}
			if env == nil {
				env = newDocEnv(t, root)
			}
			got, ok := env.runSession(t, where, b.text)
			if ok || !update || strings.Contains(b.text, "…") {
				continue
			}
			doc = strings.Replace(doc, b.text, got, 1)
		}
		if update && doc != string(data) {
			if err := os.WriteFile(page, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for key := range uncheckedSessions {
		if !unchecked[key] {
			t.Errorf("uncheckedSessions lists %q, which no page has any more: remove it", key)
		}
	}
}

// uncheckedSessions are the sessions (page: first line) this test leaves
// to another test, each with which: one that needs what a scratch
// directory cannot give (root, another user's directory). A session whose
// input no command of the page makes does not belong here: give the page
// that command (a fixture path, a go run of a fixture command).
var uncheckedSessions = map[string]string{
	"docs/repair.md: $ rollout repair --write ~/.codex/sessions/2026/03/10/rollout-2026-03-10T09-35-30-019cd6f2-8a30-7c1e-9d2a-4b5c6d7e8f90.jsonl": "TestRepairDocsStoreOwner runs it (as root, with a store planted by nobody)",
}

// fencedAt is a fenced block and the line of its opening fence.
type fencedAt struct {
	fenced
	line int
}

func fencedBlocksAt(doc string) []fencedAt {
	var out []fencedAt
	for _, m := range fenceRE.FindAllStringSubmatchIndex(doc, -1) {
		out = append(out, fencedAt{fenced{doc[m[2]:m[3]], doc[m[4]:m[5]]}, strings.Count(doc[:m[0]], "\n") + 1})
	}
	return out
}

func headLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// fixtureCommands are the fixture commands the pages run, by package: each
// main only calls its function, so the test runs them in-process rather
// than compiling them (homegen's SQLite takes minutes on a cold cache).
var fixtureCommands = map[string]func(dir string) error{
	"./internal/testkit/fixturegen/bloatgen/demotree":   bloatgen.WriteTree,
	"./internal/testkit/fixturegen/homegen/demohome":    homegen.Demo,
	"./internal/testkit/fixturegen/repairgen/docinputs": repairgen.WriteDocInputs,
}

// docEnv is the scratch directory a page's sessions run in.
type docEnv struct {
	root, work, home string
	vars             map[string]string
}

func newDocEnv(t *testing.T, root string) *docEnv {
	t.Helper()
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &docEnv{root: root, work: work, home: filepath.Join(work, "home"), vars: map[string]string{}}
	if err := os.CopyFS(filepath.Join(work, "fixtures"), os.DirFS(filepath.Join(root, "fixtures"))); err != nil {
		t.Fatal(err)
	}
	testdata, _ := filepath.Glob(filepath.Join(root, "cmd/rollout/testdata/*.jsonl"))
	demo, _ := filepath.Glob(filepath.Join(work, "fixtures/demo/rollout-*.jsonl"))
	if len(demo) != 1 {
		t.Fatalf("the demo rollout: %v", demo)
	}
	copyTo := func(src, dst string) {
		data, err := os.ReadFile(src)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(dst), 0o777)
		}
		if err == nil {
			err = os.WriteFile(dst, data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range testdata {
		copyTo(p, filepath.Join(work, "cmd/rollout/testdata", filepath.Base(p)))
	}
	copyTo(demo[0], filepath.Join(e.home, ".codex/sessions/2026/03/10", filepath.Base(demo[0])))
	e.vars["F"] = "fixtures/demo/" + filepath.Base(demo[0])
	t.Setenv("HOME", e.home)
	t.Setenv("CODEX_HOME", "")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	t.Chdir(work)
	return e
}

// writeConfig writes a YAML block that names its file ("# .rollout.yaml")
// where the page's next sessions find it.
func (e *docEnv) writeConfig(text string) {
	if name, ok := strings.CutPrefix(strings.SplitN(text, "\n", 2)[0], "# "); ok && !strings.ContainsAny(name, " /") {
		os.WriteFile(filepath.Join(e.work, name), []byte(text), 0o644)
	}
}

var (
	exitLineRE = regexp.MustCompile(`^\[exit (\d+)\]$`)
	assignRE   = regexp.MustCompile(`^([A-Z][A-Z0-9_]*)=(.*)$`)
	varRE      = regexp.MustCompile(`\$\{?([A-Z][A-Z0-9_]*)\}?`)
)

// runSession runs one session and reports whether each command printed
// what the page shows; it returns the session as the binary prints it.
func (e *docEnv) runSession(t *testing.T, where, text string) (string, bool) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var out strings.Builder
	ok := true
	for i := 0; i < len(lines); i++ {
		cmd := strings.TrimPrefix(lines[i], "$ ")
		var want []string
		wantCode := -1
		for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "$ ") {
			i++
			if m := exitLineRE.FindStringSubmatch(lines[i]); m != nil {
				wantCode, _ = strconv.Atoi(m[1])
				continue
			}
			want = append(want, lines[i])
		}
		out.WriteString("$ " + cmd + "\n")
		code, stdout, stderr, err := e.run(t, cmd)
		if err != nil {
			t.Errorf("%s: $ %s: %v", where, cmd, err)
			return text, false
		}
		got := strings.Join(append(append([]string(nil), stdout...), stderr...), "\n")
		if len(stdout)+len(stderr) > 0 {
			out.WriteString(got + "\n")
		}
		if wantCode >= 0 {
			out.WriteString(fmt.Sprintf("[exit %d]\n", code))
		}
		if !matchShown(want, append(append([]string(nil), stdout...), stderr...)) &&
			!matchShown(want, append(append([]string(nil), stderr...), stdout...)) {
			ok = false
			t.Errorf("%s: $ %s prints\n%s\nbut the page shows\n%s", where, cmd, got, strings.Join(want, "\n"))
		}
		if wantCode >= 0 && code != wantCode {
			ok = false
			t.Errorf("%s: $ %s: exit %d, the page shows %d", where, cmd, code, wantCode)
		}
	}
	return out.String(), ok
}

// run runs one command line of a session: its exit code and output lines.
func (e *docEnv) run(t *testing.T, line string) (code int, stdout, stderr []string, err error) {
	t.Helper()
	if strings.Contains(line, "…") {
		return 0, nil, nil, fmt.Errorf("a command with \"…\" cannot be pasted")
	}
	if c, _, ok := strings.Cut(line, "  #"); ok {
		line = strings.TrimSpace(c)
	}
	if m := assignRE.FindStringSubmatch(line); m != nil {
		v := e.expand(m[2])
		if sub, ok := strings.CutPrefix(v, "$(rollout "); ok && strings.HasSuffix(sub, ")") {
			_, out, _, err := e.rollout(strings.TrimSuffix(sub, ")"))
			if err != nil {
				return 0, nil, nil, err
			}
			v = strings.Join(out, "\n")
		}
		e.vars[m[1]] = v
		return 0, nil, nil, nil
	}
	line = e.expand(line)
	switch {
	case strings.HasPrefix(line, "rollout "):
		return e.rollout(strings.TrimPrefix(line, "rollout "))
	case strings.HasPrefix(line, "go run ./cmd/rollout "):
		return e.rollout(strings.TrimPrefix(line, "go run ./cmd/rollout "))
	case strings.HasPrefix(line, "go run ./internal/testkit/fixturegen/"):
		args := strings.Fields(line)
		gen, ok := fixtureCommands[args[2]]
		if !ok || len(args) != 4 {
			return 0, nil, nil, fmt.Errorf("a fixture command the docs test does not know (fixtureCommands)")
		}
		return 0, nil, nil, gen(filepath.Join(e.work, args[3]))
	case strings.HasPrefix(line, "sed -n "):
		var n int
		var file string
		if _, err := fmt.Sscanf(line, "sed -n %dp %s", &n, &file); err != nil || n < 1 {
			return 0, nil, nil, fmt.Errorf("a sed the docs test does not know (sed -n Np FILE)")
		}
		data, err := os.ReadFile(file)
		all := lines(string(data))
		return 0, all[min(n-1, len(all)):min(n, len(all))], nil, err
	case strings.HasPrefix(line, "ln -s "):
		f := strings.Fields(line)
		if len(f) != 4 {
			return 0, nil, nil, fmt.Errorf("an ln the docs test does not know (ln -s TARGET NAME)")
		}
		return 0, nil, nil, os.Symlink(f[2], f[3])
	case strings.HasPrefix(line, "cat "):
		data, err := os.ReadFile(strings.TrimPrefix(line, "cat "))
		return 0, lines(string(data)), nil, err
	}
	return 0, nil, nil, fmt.Errorf("not a command the docs test runs (rollout, NAME=VALUE, go run of a fixture command, cat, sed -n, ln -s)")
}

// rollout runs rollout in-process with args, a shell line after the
// command's name, and the filters piped to.
func (e *docEnv) rollout(line string) (code int, stdout, stderr []string, err error) {
	parts := strings.Split(line, " | ")
	args, err := shellWords(parts[0])
	if err != nil {
		return 0, nil, nil, err
	}
	io, out, errb := testIO("")
	code = run(args, io)
	stdout = lines(out.String())
	for _, filter := range parts[1:] {
		var a, b int
		switch {
		case sscan(filter, "head -%d", &a):
			stdout = stdout[:min(a, len(stdout))]
		case sscan(filter, "tail -%d", &a):
			stdout = stdout[max(0, len(stdout)-a):]
		case sscan(filter, "sed -n '%d,%dp'", &a, &b) && a >= 1 && b >= a:
			stdout = stdout[min(a-1, len(stdout)):min(b, len(stdout))]
		default:
			return 0, nil, nil, fmt.Errorf("a filter the docs test does not know: %s", filter)
		}
	}
	return code, e.normalise(stdout), e.normalise(lines(errb.String())), nil
}

func sscan(s, format string, args ...any) bool {
	n, err := fmt.Sscanf(s, format, args...)
	return err == nil && n == len(args)
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func (e *docEnv) expand(s string) string {
	s = varRE.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := e.vars[varRE.FindStringSubmatch(m)[1]]; ok {
			return v
		}
		return m
	})
	return regexp.MustCompile(`(^|[ =])~/`).ReplaceAllString(s, "${1}"+e.home+"/")
}

// normalise writes paths as the page does: relative to the scratch
// directory, HOME as "~".
func (e *docEnv) normalise(ls []string) []string {
	for i, l := range ls {
		l = strings.ReplaceAll(l, e.home, "~")
		ls[i] = strings.ReplaceAll(l, e.work+"/", "")
	}
	return ls
}

// shellWords splits a command line as a shell does for the quoting the
// docs use: words, '...' and "...".
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %s", s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// matchShown matches output lines against a page's: "…" in a line is any
// text, a line of only "…" any number of lines.
func matchShown(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimSpace(want[0]) == "…" {
		for k := 0; k <= len(got); k++ {
			if matchShown(want[1:], got[k:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && shownLineRE(want[0]).MatchString(got[0]) && matchShown(want[1:], got[1:])
}

func shownLineRE(line string) *regexp.Regexp {
	parts := strings.Split(line, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*?") + "$")
}

// The matcher's rules, on themselves.
func TestMatchShown(t *testing.T) {
	for _, tt := range []struct {
		want, got []string
		ok        bool
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, true},
		{[]string{"a"}, []string{"a", "b"}, false},
		{[]string{"a", "…", "d"}, []string{"a", "b", "c", "d"}, true},
		{[]string{"a", "…", "d"}, []string{"a", "d"}, true},
		{[]string{"a", "…"}, []string{"a", "b", "c", "e"}, true},
		{[]string{"x/…/y.jsonl"}, []string{"x/p/q/y.jsonl"}, true},
		{[]string{"x/…/y.jsonl"}, []string{"x/p/q/y.jsonl.bak"}, false},
		{[]string{"1+1"}, []string{"11"}, false},
	} {
		if got := matchShown(tt.want, tt.got); got != tt.ok {
			t.Errorf("matchShown(%q, %q) = %v", tt.want, tt.got, got)
		}
	}
	if w, _ := shellWords(`a 'b c' "d"`); !slices.Equal(w, []string{"a", "b c", "d"}) {
		t.Errorf("shellWords: %q", w)
	}
}
