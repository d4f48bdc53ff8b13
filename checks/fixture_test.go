package checks_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/escape"
)

// ruleFixture is one fixtures/rules/*.txtar file (format: fixtures/rules/README.md).
type ruleFixture struct {
	name   string // file name without .txtar
	rule   string // the rule the fixture is about, from its name
	path   string // file name given to the run ("" = per-section default)
	maxLn  int64
	now    time.Time       // the `now` directive: Options.Now
	migLim int64           // the `migration-limit` directive: Options.MigrationLimit
	noEOL  map[string]bool // sections written without their final newline ("*" = all)
	// home holds the other rollouts of a Codex home, by path in the home
	// (sections named sessions/... or archived_sessions/...; a .zst one is
	// written compressed): with them each case runs at path inside a
	// fresh home, its lineage resolved there.
	home   map[string][]byte
	cases  []fixtureCase
	source string // fixture path, for messages
}

// fixtureCase is one rollout section and the findings it must produce.
type fixtureCase struct {
	section string // rollout.jsonl or clean.jsonl
	data    []byte
	want    []wantFinding
}

type wantFinding struct {
	Line     int
	Rule     string
	Severity string
}

func (w wantFinding) String() string { return fmt.Sprintf("%d %s %s", w.Line, w.Rule, w.Severity) }

// lines renders findings as want lines, for readable diffs.
func lines(ws []wantFinding) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return out
}

const rulesDir = "../fixtures/rules"

// fixtureDirs hold rule fixtures in one format: fixtures/rules,
// fixtures/handoffs whose fixtures also carry repair goldens, and
// fixtures/real whose fixtures reproduce record shapes of real rollouts per
// Codex version (fixtures/real/README.md says where each shape was seen).
var fixtureDirs = []string{rulesDir, "../fixtures/handoffs", "../fixtures/real"}

// loadRuleFixtures reads every fixture; a malformed fixture is an error, not
// a skipped test.
func loadRuleFixtures() ([]*ruleFixture, error) {
	var paths []string
	for _, dir := range fixtureDirs {
		p, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
		if err != nil {
			return nil, err
		}
		if len(p) == 0 {
			return nil, fmt.Errorf("no fixtures in %s", dir)
		}
		paths = append(paths, p...)
	}
	var out []*ruleFixture
	for _, p := range paths {
		fx, err := parseRuleFixture(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, fx)
	}
	return out, nil
}

func parseRuleFixture(p string) (*ruleFixture, error) {
	ar, err := txtar.ParseFile(p)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(filepath.Base(p), ".txtar")
	base, _, _ := strings.Cut(name, ".") // area-name[.variant]
	area, rest, ok := strings.Cut(base, "-")
	if !ok || area == "" || rest == "" {
		return nil, fmt.Errorf("name %q is not <area>-<name>[.variant].txtar", name)
	}
	fx := &ruleFixture{name: name, rule: area + "/" + rest, noEOL: map[string]bool{}, source: p}
	if err := fx.directives(ar.Comment); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, f := range ar.Files {
		if _, dup := files[f.Name]; dup {
			return nil, fmt.Errorf("section %q twice", f.Name)
		}
		switch {
		case f.Name == "rollout.jsonl", f.Name == "want", f.Name == "clean.jsonl", f.Name == "clean.want":
		case strings.HasPrefix(f.Name, "sessions/"), strings.HasPrefix(f.Name, "archived_sessions/"):
			if fx.home == nil {
				fx.home = map[string][]byte{}
			}
			fx.home[f.Name] = escape.Decode(f.Data)
			continue
		default:
			return nil, fmt.Errorf("unknown section %q", f.Name)
		}
		files[f.Name] = f.Data
	}
	if _, ok := files["rollout.jsonl"]; !ok {
		return nil, fmt.Errorf("no -- rollout.jsonl -- section")
	}
	if _, ok := files["want"]; !ok {
		return nil, fmt.Errorf("no -- want -- section")
	}
	if fx.home != nil && !strings.HasPrefix(fx.path, "sessions/") && !strings.HasPrefix(fx.path, "archived_sessions/") {
		return nil, fmt.Errorf("a fixture with home sections needs `path sessions/...` (or archived_sessions/...)")
	}
	_, hasClean := files["clean.jsonl"]
	if _, ok := files["clean.want"]; ok && !hasClean {
		return nil, fmt.Errorf("clean.want without clean.jsonl")
	}
	for _, sec := range [][2]string{{"rollout.jsonl", "want"}, {"clean.jsonl", "clean.want"}} {
		data, ok := files[sec[0]]
		if !ok {
			continue
		}
		want, err := parseWant(files[sec[1]])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sec[1], err)
		}
		raw := escape.Decode(data)
		if fx.noEOL["*"] || fx.noEOL[sec[0]] {
			if !bytes.HasSuffix(raw, []byte("\n")) {
				return nil, fmt.Errorf("%s: no-final-newline but the section has no final newline", sec[0])
			}
			raw = raw[:len(raw)-1]
		}
		fx.cases = append(fx.cases, fixtureCase{section: sec[0], data: raw, want: want})
	}
	for name := range fx.noEOL {
		if _, ok := files[name]; name != "*" && !ok {
			return nil, fmt.Errorf("no-final-newline names missing section %q", name)
		}
	}
	return fx, nil
}

// directives reads the comment section: lines starting with # are prose,
// every other non-blank line is a directive.
func (fx *ruleFixture) directives(comment []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(comment))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		switch fields[0] {
		case "path":
			if len(fields) != 2 {
				return fmt.Errorf("directive %q: want `path NAME`", line)
			}
			fx.path = fields[1]
		case "max-line-bytes":
			n, err := strconv.ParseInt(strings.Join(fields[1:], ""), 10, 64)
			if err != nil || len(fields) != 2 || n <= 0 {
				return fmt.Errorf("directive %q: want `max-line-bytes N`", line)
			}
			fx.maxLn = n
		case "migration-limit":
			n, err := strconv.ParseInt(strings.Join(fields[1:], ""), 10, 64)
			if err != nil || len(fields) != 2 || n <= 0 {
				return fmt.Errorf("directive %q: want `migration-limit N`", line)
			}
			fx.migLim = n
		case "now":
			t, err := time.Parse(time.RFC3339Nano, strings.Join(fields[1:], ""))
			if err != nil || len(fields) != 2 {
				return fmt.Errorf("directive %q: want `now RFC3339-TIME`", line)
			}
			fx.now = t
		case "no-final-newline":
			if len(fields) == 1 {
				fx.noEOL["*"] = true
			}
			for _, s := range fields[1:] {
				fx.noEOL[s] = true
			}
		default:
			return fmt.Errorf("unknown directive %q (prose lines start with #)", line)
		}
	}
	return nil
}

// parseWant reads "LINE RULE [SEVERITY]" lines; the severity defaults to the
// rule's registered one.
func parseWant(data []byte) ([]wantFinding, error) {
	var out []wantFinding
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || len(f) > 3 {
			return nil, fmt.Errorf("%q: want `LINE RULE [SEVERITY]`", line)
		}
		n, err := strconv.Atoi(f[0])
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: bad line number", line)
		}
		r, ok := checks.Lookup(f[1])
		if !ok {
			return nil, fmt.Errorf("%q: unregistered rule %s", line, f[1])
		}
		sev := r.Severity.String()
		if len(f) == 3 {
			s, err := checks.ParseSeverity(f[2])
			if err != nil || s.String() != f[2] {
				return nil, fmt.Errorf("%q: bad severity %q", line, f[2])
			}
			sev = s.String()
		}
		out = append(out, wantFinding{Line: n, Rule: f[1], Severity: sev})
	}
	sortWant(out)
	return out, nil
}

func sortWant(ws []wantFinding) {
	slices.SortStableFunc(ws, func(a, b wantFinding) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Rule, b.Rule)
	})
}

// runPath is the file name a case is run under.
func (fx *ruleFixture) runPath(c fixtureCase) string {
	if fx.path != "" {
		return fx.path
	}
	return fx.name + "/" + c.section
}

// run verifies case c: from memory under runPath, or, for a fixture with
// home sections, as a file of a fresh Codex home, with the lineage
// resolved in that home as `rollout verify` does.
func (fx *ruleFixture) run(t *testing.T, c fixtureCase) (*checks.Result, error) {
	t.Helper()
	opts := checks.Options{MaxLineBytes: fx.maxLn, Now: fx.now, MigrationLimit: fx.migLim}
	if fx.home == nil {
		return checks.RunReader(fx.runPath(c), bytes.NewReader(c.data), opts)
	}
	dir := t.TempDir()
	write := func(name string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".zst") {
			enc, _ := zstd.NewWriter(nil)
			data = enc.EncodeAll(data, nil)
			enc.Close()
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range fx.home {
		write(name, data)
	}
	write(fx.path, c.data)
	p := filepath.Join(dir, filepath.FromSlash(fx.path))
	opts.Lineage = lineage.New([]string{p}).Ancestry
	return checks.Run(p, nil, opts)
}

// gotFindings reduces findings to what fixtures compare.
func gotFindings(fs []checks.Finding) []wantFinding {
	out := make([]wantFinding, 0, len(fs))
	for _, f := range fs {
		out = append(out, wantFinding{Line: f.Line, Rule: f.Rule, Severity: f.Severity.String()})
	}
	sortWant(out)
	return out
}
