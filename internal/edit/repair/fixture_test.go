package repair_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/testkit/filetest"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/escape"
	"github.com/rollout-dev/rollout/rollout"
)

// repairFixture is one fixtures/repair/*.txtar (format: fixtures/repair/README.md).
type repairFixture struct {
	name      string
	source    string
	args      []string
	fixes     checks.FixSet // args' --fix (nil: the default fixes)
	exit      int
	path      string
	thread    string
	noEOL     map[string]bool
	input     []byte
	want      []byte
	wantQ     []byte // nil: no quarantine file
	wantPlan  []string
	hasPlan   bool
	wantFixes int // fixes in the plan; -1: not checked
}

const repairFixturesDir = "../../../fixtures/repair"

func loadRepairFixtures(t *testing.T) []*repairFixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repairFixturesDir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s (%v)", repairFixturesDir, err)
	}
	var out []*repairFixture
	for _, p := range paths {
		fx, err := parseRepairFixture(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, fx)
	}
	return out
}

func parseRepairFixture(p string) (*repairFixture, error) {
	ar, err := txtar.ParseFile(p)
	if err != nil {
		return nil, err
	}
	fx := &repairFixture{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), source: p, noEOL: map[string]bool{}, wantFixes: -1}
	if err := fx.readDirectives(ar.Comment); err != nil {
		return nil, err
	}
	for _, f := range ar.Files {
		data := escape.Decode(f.Data)
		if fx.noEOL[f.Name] {
			if !bytes.HasSuffix(data, []byte("\n")) {
				return nil, fmt.Errorf("no-final-newline %s: the section has no final newline", f.Name)
			}
			data = data[:len(data)-1]
		}
		switch f.Name {
		case "rollout.jsonl":
			fx.input = data
		case "want.jsonl":
			fx.want = data
		case "want.quarantine.jsonl":
			fx.wantQ = data
		case "want.plan":
			fx.hasPlan = true
			for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
				fx.wantPlan = append(fx.wantPlan, strings.Join(strings.Fields(l), " "))
			}
		default:
			return nil, fmt.Errorf("unknown section %q", f.Name)
		}
	}
	if fx.input == nil || fx.want == nil {
		return nil, fmt.Errorf("needs -- rollout.jsonl -- and -- want.jsonl --")
	}
	if fx.path == "" {
		fx.path = "rollout.jsonl"
	}
	if fx.fixes, err = fixesOf(fx.args); err != nil {
		return nil, err
	}
	if fx.want, err = fx.expandIDs(fx.want); err != nil {
		return nil, err
	}
	for i, l := range fx.wantPlan {
		b, err := fx.expandIDs([]byte(l))
		if err != nil {
			return nil, err
		}
		fx.wantPlan[i] = string(b)
	}
	return fx, nil
}

// readDirectives reads the directives of a fixture's comment (prose lines
// start with #).
func (fx *repairFixture) readDirectives(comment []byte) error {
	var err error
	sc := bufio.NewScanner(bytes.NewReader(comment))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		switch f[0] {
		case "args":
			fx.args = f[1:]
		case "exit":
			if fx.exit, err = strconv.Atoi(f[1]); err != nil {
				return fmt.Errorf("directive %q", line)
			}
		case "fixes":
			if fx.wantFixes, err = strconv.Atoi(f[1]); err != nil {
				return fmt.Errorf("directive %q", line)
			}
		case "path":
			fx.path = f[1]
		case "thread":
			fx.thread = f[1]
		case "no-final-newline":
			for _, s := range f[1:] {
				fx.noEOL[s] = true
			}
		default:
			return fmt.Errorf("unknown directive %q (prose lines start with #)", line)
		}
	}
	return nil
}

// <ID PREFIX LINE INDEX [ts=K]> in want.jsonl stands for the id repair must
// derive: PREFIX_ + the UUIDv7 of (time of input line LINE, thread, LINE,
// INDEX), as cli.md specifies. The time is that of the line's first
// "timestamp", or of its K-th (the K-th object of a concatenated line).
var idTokenRE = regexp.MustCompile(`<ID ([a-z]+) ([0-9]+) (-?[0-9]+)(?: ts=([0-9]+))?>`)
var timestampRE = regexp.MustCompile(`"timestamp":"([^"]+)"`)

func (fx *repairFixture) expandIDs(b []byte) ([]byte, error) {
	lines := bytes.Split(fx.input, []byte("\n"))
	var err error
	out := idTokenRE.ReplaceAllFunc(b, func(m []byte) []byte {
		g := idTokenRE.FindSubmatch(m)
		line, _ := strconv.Atoi(string(g[2]))
		index, _ := strconv.Atoi(string(g[3]))
		if fx.thread == "" || line < 1 || line > len(lines) {
			err = fmt.Errorf("%s needs a thread directive and an input line", m)
			return m
		}
		var ms int64
		k := 1
		if len(g[4]) > 0 {
			k, _ = strconv.Atoi(string(g[4]))
		}
		if all := timestampRE.FindAllSubmatch(lines[line-1], -1); len(all) >= k {
			t, perr := time.Parse(time.RFC3339Nano, string(all[k-1][1]))
			if perr != nil {
				err = perr
			}
			ms = t.UnixMilli()
		}
		return []byte(string(g[1]) + "_" + rollout.DerivedUUIDv7(ms, fx.thread, line, index))
	})
	return out, err
}

// planLinesOf keeps the fix lines of repair's output, spaces collapsed
// (notes are not fixes).
func planLinesOf(stdout string) []string {
	var out []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "  note: ") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return out
}

// fixesOf reads a fixture's args: --fix LIST, as repair's flag takes it.
func fixesOf(args []string) (checks.FixSet, error) {
	var fix []string
	for i := 0; i < len(args); i++ {
		if args[i] != "--fix" || i+1 == len(args) {
			return nil, fmt.Errorf("args %q: only --fix LIST is read here", args)
		}
		i++
		fix = append(fix, strings.Split(args[i], ",")...)
	}
	if fix == nil {
		return nil, nil
	}
	return checks.SelectFixes(fix)
}

// fixtureRun is one repair of a fixture: the exit code the command would
// give it, its plan as printed, its hints, and the Outcome.
type fixtureRun struct {
	exit  int
	plan  string // the plan and the outcome, as repair prints them
	hints []string
	out   *repair.Outcome
}

// runFixture repairs path with the fixture's fixes, written (to output,
// "": in place) or not.
func runFixture(fx *repairFixture, path string, write bool, output string) fixtureRun {
	o, printed, hints, err := repairPrinted(repair.Options{Path: path, Output: output, Write: write, Fix: fx.fixes})
	if err != nil {
		return fixtureRun{exit: 2, plan: err.Error()}
	}
	return fixtureRun{exit: exitOf(o), plan: printed, hints: hints, out: o}
}

// exitOf is the exit code repair gives an outcome (cmd/rollout/repair.go):
// 4 refused, late bytes or a warning; 3 a finding cut short; 1 errors
// remain; 0.
func exitOf(o *repair.Outcome) int {
	if o.Refusal != nil || o.Late != nil || o.Warning != "" {
		return 4
	}
	code := 0
	for _, f := range o.Remaining() {
		switch {
		case f.Incomplete:
			code = 3
		case f.Severity == checks.Error && code == 0:
			code = 1
		}
	}
	return code
}

// TestRepairFixtures: per fixture, the dry run writes nothing; a write
// produces exactly want.jsonl and want.quarantine.jsonl and keeps the input
// as the backup; a second repair changes nothing; Output and .zst give the
// same bytes.
func TestRepairFixtures(t *testing.T) {
	for _, fx := range loadRepairFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, fx.path)
			if err := os.WriteFile(path, fx.input, 0o644); err != nil {
				t.Fatal(err)
			}

			dry := runFixture(fx, path, false, "")
			if dry.exit != fx.exit {
				t.Fatalf("dry run: exit %d, want %d\n%s", dry.exit, fx.exit, dry.plan)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, fx.input) {
				t.Fatalf("dry run changed the file")
			}
			if names := filetest.List(t, dir); len(names) != 1 {
				t.Fatalf("dry run created files: %v", names)
			}
			plan := planLinesOf(dry.plan)
			if fx.wantFixes >= 0 && len(plan) != fx.wantFixes {
				t.Errorf("plan has %d lines, want %d:\n%s", len(plan), fx.wantFixes, dry.plan)
			}
			if fx.hasPlan {
				if diff := cmp.Diff(fx.wantPlan, plan); diff != "" {
					t.Errorf("plan (-want +got):\n%s", diff)
				}
			}

			wr := runFixture(fx, path, true, "")
			if wr.exit != fx.exit {
				t.Fatalf("write: exit %d, want %d\n%s", wr.exit, fx.exit, wr.plan)
			}
			got, _ := os.ReadFile(path)
			if diff := cmp.Diff(string(fx.want), string(got)); diff != "" {
				t.Errorf("%s: repaired file (-want +got):\n%s", fx.source, diff)
			}
			checkOptInHints(t, dry.hints, path)
			if p := planLinesOf(wr.plan); !cmp.Equal(p, plan) {
				t.Errorf("the write's plan differs from the dry run's:\n%s\nvs\n%s", strings.Join(p, "\n"), strings.Join(plan, "\n"))
			}
			q, qerr := os.ReadFile(path + ".quarantine.jsonl")
			switch {
			case fx.wantQ == nil && qerr == nil:
				t.Errorf("unexpected quarantine file:\n%s", q)
			case fx.wantQ != nil:
				if diff := cmp.Diff(string(fx.wantQ), string(q)); diff != "" {
					t.Errorf("%s: quarantine (-want +got):\n%s", fx.source, diff)
				}
			}
			changed := !bytes.Equal(fx.want, fx.input)
			if bak, err := os.ReadFile(path + ".bak"); changed && !bytes.Equal(bak, fx.input) {
				t.Errorf("backup differs from the input (err %v)", err)
			} else if !changed && err == nil {
				t.Errorf("a backup was made although nothing changed")
			}

			checkFixtureAgain(t, fx, dir, path, got)
		})
	}
}

// checkFixtureAgain: a second repair of the repaired file (got, at path)
// plans and writes nothing; Output and a .zst copy of the input give the
// same bytes.
func checkFixtureAgain(t *testing.T, fx *repairFixture, dir, path string, got []byte) {
	t.Helper()
	// Idempotent: a second repair plans nothing and writes nothing.
	before := filetest.List(t, dir)
	again := runFixture(fx, path, true, "")
	if again.out == nil || !again.out.NothingToFix() {
		t.Errorf("second repair is not a no-op:\n%s", again.plan)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, got) {
		t.Errorf("second repair changed the file")
	}
	if after := filetest.List(t, dir); !cmp.Equal(before, after) {
		t.Errorf("second repair changed the directory: %v -> %v", before, after)
	}
	if again.exit != fx.exit {
		t.Errorf("second repair: exit %d, want %d", again.exit, fx.exit)
	}

	// Output and .zst produce the same content.
	in2 := filepath.Join(dir, "in2-"+fx.path)
	os.WriteFile(in2, fx.input, 0o644)
	outPath := filepath.Join(dir, "out.jsonl")
	if r := runFixture(fx, in2, true, outPath); r.exit != fx.exit {
		t.Errorf("Output: exit %d\n%s", r.exit, r.plan)
	}
	if o, _ := os.ReadFile(outPath); !bytes.Equal(o, got) {
		t.Errorf("Output wrote different bytes")
	}
	if in, _ := os.ReadFile(in2); !bytes.Equal(in, fx.input) {
		t.Errorf("Output modified the input")
	}
	zpath := filepath.Join(dir, "z-"+fx.path+".zst")
	os.WriteFile(zpath, filetest.Zstd(t, fx.input), 0o644)
	if r := runFixture(fx, zpath, true, ""); r.exit != fx.exit {
		t.Errorf(".zst: exit %d\n%s", r.exit, r.plan)
	}
	if z := filetest.Unzstd(t, zpath); !bytes.Equal(z, got) {
		t.Errorf(".zst: decompressed result differs from the plain one")
	}
}

// TestRepairHandoffGoldens runs repair (--fix handoff/) on every handoff
// fixture that has a golden (fixtures/handoffs/NAME.fixed.jsonl, written for
// the handoff fixes of checks/handoff_fix.go): repair must produce it byte
// for byte, and a second repair must find nothing to do.
func TestRepairHandoffGoldens(t *testing.T) {
	goldens, _ := filepath.Glob("../../../fixtures/handoffs/*.fixed.jsonl")
	if len(goldens) == 0 {
		t.Skip("no handoff goldens")
	}
	for _, g := range goldens {
		name := strings.TrimSuffix(filepath.Base(g), ".fixed.jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(filepath.Join(filepath.Dir(g), name+".txtar"))
			if err != nil {
				t.Fatal(err)
			}
			var input []byte
			for _, f := range ar.Files {
				if f.Name == "rollout.jsonl" {
					input = escape.Decode(f.Data)
				}
			}
			dir := t.TempDir()
			in, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.jsonl")
			os.WriteFile(in, input, 0o644)
			fixes, err := checks.SelectFixes([]string{"handoff/"})
			if err != nil {
				t.Fatal(err)
			}
			o, stdout, err := repairWrite(repair.Options{Path: in, Output: out, Write: true, Fix: fixes})
			if err != nil || !cleanExit(o) {
				t.Fatalf("repair: %v\n%s", err, stdout)
			}
			if diff := cmp.Diff(string(readFile(t, g)), string(readFile(t, out))); diff != "" {
				t.Errorf("repair output (-%s +got):\n%s", g, diff)
			}
			if o, stdout, err := repairWrite(repair.Options{Path: out, Fix: fixes}); err != nil || !o.NothingToFix() {
				t.Errorf("second repair is not a no-op: %v\n%s", err, stdout)
			}
		})
	}
}

// optInHint is repair's hint naming opt-in fixes.
var optInHint = regexp.MustCompile(`^(.+) (?:has|have) an opt-in fix`)

// checkOptInHints: every opt-in fix repair's hint offers is for a finding
// the repaired file (at path) still has. A hint for a finding the plan's
// own fixes resolve would send the user to a fix that discards or invents
// data (an orphan's output dropped, a fake "aborted" output added) where
// the plan already fixed it losslessly.
func checkOptInHints(t *testing.T, hints []string, path string) {
	t.Helper()
	var m []string
	for _, h := range hints {
		if m = optInHint.FindStringSubmatch(h); m != nil {
			break
		}
	}
	if m == nil {
		return
	}
	res, err := checks.Run(path, nil, checks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]bool{}
	for _, f := range res.Findings {
		left[f.Rule] = true
	}
	for _, rule := range strings.Split(m[1], ", ") {
		if !left[rule] {
			t.Errorf("repair hints at %s's opt-in fix, but the repaired file has no %s finding:\n%s", rule, rule, m[0])
		}
	}
}
