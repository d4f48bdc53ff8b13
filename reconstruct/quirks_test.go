package reconstruct

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/rollout"
)

// The quirks table is well formed: distinct ids, each with both sides of
// the boundary and a source, oldest first; every line type it names is one
// rollout knows.
func TestQuirksTable(t *testing.T) {
	seen := map[QuirkID]bool{}
	var last rollout.Version
	for _, q := range Quirks() {
		if seen[q.ID] {
			t.Errorf("%s is in the table twice", q.ID)
		}
		seen[q.ID] = true
		if q.Before == "" || q.After == "" || q.Source == "" || q.Since == (rollout.Version{}) {
			t.Errorf("%s: a row needs Since, Before, After and Source: %+v", q.ID, q)
		}
		if q.Since.Less(last) {
			t.Errorf("%s (%s) comes after a row of %s: keep the table oldest first", q.ID, q.Since, last)
		}
		last = q.Since
		for _, typ := range q.LineTypes {
			if !rollout.KnownLineType(typ) {
				t.Errorf("%s: line type %q is not one rollout knows", q.ID, typ)
			}
		}
	}
}

// Every quirk is read by the code it is about (the engine, a rule, or
// the resume input Codex sends): a row nothing reads is a boundary the
// code has forgotten, or dead.
func TestQuirksAreRead(t *testing.T) {
	consts := regexp.MustCompile(`(?m)^\t(Quirk\w+)\s+QuirkID = "([^"]+)"`)
	src, err := os.ReadFile("quirks.go")
	if err != nil {
		t.Fatal(err)
	}
	var code strings.Builder
	for _, dir := range []string{".", "../checks", "../internal/derive/resumeinput"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == "quirks.go" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			code.Write(b)
		}
	}
	ids := map[QuirkID]bool{}
	for _, m := range consts.FindAllStringSubmatch(string(src), -1) {
		ids[QuirkID(m[2])] = true
		if !regexp.MustCompile(`\b`+m[1]+`\b`).MatchString(code.String()) && !hasLineTypes(QuirkID(m[2])) {
			t.Errorf("%s (%s) is read by no code outside the table", m[1], m[2])
		}
	}
	for _, q := range Quirks() {
		if !ids[q.ID] {
			t.Errorf("row %s has no QuirkID constant", q.ID)
		}
	}
	if len(ids) != len(Quirks()) {
		t.Errorf("%d constants, %d rows", len(ids), len(Quirks()))
	}
}

// hasLineTypes: the rows about line types are read through lineTypeSince.
func hasLineTypes(id QuirkID) bool {
	for _, q := range quirks {
		if q.ID == id {
			return len(q.LineTypes) > 0
		}
	}
	return false
}

func TestHas(t *testing.T) {
	for _, tt := range []struct {
		v       string
		yes, ok bool
	}{{"0.144.6", false, true}, {"0.145.0", true, true}, {"0.171.0-alpha.2", true, true}, {"", false, false}, {"dev", false, false}} {
		if yes, ok := Has(QuirkNewlineBeforeTorn, tt.v); yes != tt.yes || ok != tt.ok {
			t.Errorf("Has(%s, %q) = %v, %v; want %v, %v", QuirkNewlineBeforeTorn, tt.v, yes, ok, tt.yes, tt.ok)
		}
	}
	if got := lineTypeSince[rollout.TypeWorldState]; got != Since(QuirkReadsWorldState) {
		t.Errorf("world_state is read since %s, the table says %s", got, Since(QuirkReadsWorldState))
	}
}

// Every evidence type has a doc comment: the evidence structs are the
// public evidence schema of the findings made from them.
func TestEvidenceDocumented(t *testing.T) {
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				if ts.Name.IsExported() && strings.HasSuffix(ts.Name.Name, "Evidence") && g.Doc == nil && ts.Doc == nil {
					t.Errorf("%s: %s has no doc comment", fset.Position(ts.Pos()), ts.Name.Name)
				}
			}
		}
	}
}

// The checked range is the range of the conformance goldens: its newest
// is the newest version directory (so it cannot be bumped without the
// goldens), its oldest the oldest one.
func TestCheckedRangeIsTheGoldens(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join("..", "internal", "testkit", "conformance", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	var versions []rollout.Version
	for _, d := range dirs {
		v, ok := rollout.ParseVersion(d.Name())
		if !d.IsDir() || !ok || v.String() != d.Name() {
			continue
		}
		if _, err := os.Stat(filepath.Join("..", "internal", "testkit", "conformance", "testdata", d.Name(), "turns3", "golden.json")); err != nil {
			continue // not a version's goldens
		}
		versions = append(versions, v)
	}
	if len(versions) < 2 {
		t.Fatalf("golden versions: %v", versions)
	}
	oldest, newest := versions[0], versions[0]
	for _, v := range versions {
		if v.Less(oldest) {
			oldest = v
		}
		if newest.Less(v) {
			newest = v
		}
	}
	if CheckedOldest != oldest || CheckedNewest != newest {
		t.Errorf("checked range %v..%v, the goldens cover %v..%v: set CheckedOldest, CheckedNewest in quirks.go", CheckedOldest, CheckedNewest, oldest, newest)
	}
}

func TestUnchecked(t *testing.T) {
	next := rollout.Version{Major: CheckedNewest.Major, Minor: CheckedNewest.Minor + 1}
	for v, want := range map[string][2]bool{
		CheckedNewest.String(): {false, true},
		rollout.Version{Major: CheckedNewest.Major, Minor: CheckedNewest.Minor, Patch: 9}.String(): {false, true}, // a patch of the checked minor
		next.String():              {true, true},
		next.String() + "-alpha.1": {true, true},
		"1.0.0":                    {true, true},
		CheckedOldest.String():     {false, true},
		"0.1.0":                    {false, true}, // older than the range: no finding of this kind
		"":                         {false, false},
		"dev":                      {false, false},
	} {
		newer, ok := Unchecked(v)
		if [2]bool{newer, ok} != want {
			t.Errorf("Unchecked(%q) = %v, %v; want %v", v, newer, ok, want)
		}
	}
}
