package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/output/report"
)

const module = "github.com/rollout-dev/rollout"

// stages is the flow the folders follow (README, "Layout"), as package path
// prefixes in order: a package may import its own stage and earlier ones,
// never a later one. The harnesses come last: only tests and tools use them.
var stages = [][]string{
	{"internal/base/"},
	{"rollout", "mergepatch"},
	{"reconstruct"},
	{"internal/codex/"},
	{"checks"},
	{"internal/derive/"},
	{"internal/edit/"},
	{"internal/output/"},
	{"cmd/"},
	{"internal/testkit/"},
}

// designCard is the top level the project's design card names; every other
// package lives under internal/.
var designCard = []string{"checks", "cmd", "internal", "mergepatch", "reconstruct", "rollout"}

func stageOf(pkg string) int {
	for i, prefixes := range stages {
		for _, p := range prefixes {
			if pkg == strings.TrimSuffix(p, "/") || strings.HasPrefix(pkg, strings.TrimSuffix(p, "/")+"/") {
				return i
			}
		}
	}
	return -1
}

type goFile struct {
	path, pkg string // slash paths relative to the module root
	test      bool
	ast       *ast.File
	fset      *token.FileSet
}

// goFiles parses every Go file of the module (imports and declarations).
func goFiles(t *testing.T) []goFile {
	t.Helper()
	root := filepath.Join("..", "..", "..")
	var out []goFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		out = append(out, goFile{path: rel, pkg: filepath.ToSlash(filepath.Dir(rel)),
			test: strings.HasSuffix(p, "_test.go"), ast: f, fset: fset})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("found only %d Go files under %s", len(out), root)
	}
	return out
}

// TestLayoutFollowsTheFlow: the top level is the design card's, and no
// package imports a later stage of the flow.
func TestLayoutFollowsTheFlow(t *testing.T) {
	files := goFiles(t)
	top := map[string]bool{}
	for _, f := range files {
		if i := strings.IndexByte(f.path, '/'); i > 0 {
			top[f.path[:i]] = true
		}
		if f.test {
			continue
		}
		from := stageOf(f.pkg)
		if from < 0 {
			t.Errorf("%s: package %s is in no stage of the flow", f.path, f.pkg)
			continue
		}
		for _, imp := range f.ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			dep, ok := strings.CutPrefix(path, module+"/")
			if !ok {
				continue
			}
			if to := stageOf(dep); to > from {
				t.Errorf("%s imports %s: a later stage of the flow (%v after %v)", f.path, dep, stages[to], stages[from])
			}
		}
	}
	for dir := range top {
		if !slices.Contains(designCard, dir) {
			t.Errorf("top-level folder %s holds Go code: only %v do (the rest goes under internal/)", dir, designCard)
		}
	}
}

// TestReclaimDoesNotImportRepair: reclaim shares the write guard with
// repair, not the repair transaction.
func TestReclaimDoesNotImportRepair(t *testing.T) {
	for _, f := range goFiles(t) {
		if f.pkg != "internal/edit/reclaim" || f.test {
			continue
		}
		for _, imp := range f.ast.Imports {
			if imp.Path.Value == strconv.Quote(module+"/internal/edit/repair") {
				t.Errorf("%s imports the repair transaction", f.path)
			}
		}
	}
}

// TestSizes: the command stays wiring (cmd/ small, no long function there)
// and no file grows past what a reader takes in.
func TestSizes(t *testing.T) {
	const (
		maxCmdLines  = 4200
		maxCmdFunc   = 80
		maxFileLines = 1000
	)
	cmdLines := 0
	for _, f := range goFiles(t) {
		lines := f.fset.File(f.ast.Pos()).LineCount()
		if lines > maxFileLines && !generated(f.ast) {
			t.Errorf("%s: %d lines (at most %d)", f.path, lines, maxFileLines)
		}
		if !strings.HasPrefix(f.pkg, "cmd/") || f.test {
			continue
		}
		cmdLines += lines
		for _, d := range f.ast.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				n := f.fset.Position(fd.End()).Line - f.fset.Position(fd.Pos()).Line + 1
				if n > maxCmdFunc {
					t.Errorf("%s: %s is %d lines (at most %d in cmd/)", f.path, fd.Name.Name, n, maxCmdFunc)
				}
			}
		}
	}
	if cmdLines > maxCmdLines {
		t.Errorf("cmd/ has %d non-test lines (at most %d): logic a second front end would need belongs below it", cmdLines, maxCmdLines)
	}
}

func generated(f *ast.File) bool {
	for _, c := range f.Comments {
		if strings.HasPrefix(c.Text(), "Code generated ") && strings.Contains(c.Text(), "DO NOT EDIT") {
			return true
		}
	}
	return false
}

// TestNoFormatChosenInCmd: a command names its document, never a format:
// the format table (internal/output/report, formats.go) decides the names,
// the default, the help and the writer.
func TestNoFormatChosenInCmd(t *testing.T) {
	names := map[string]bool{"markdown": true} // the GitHub step summary's
	for _, doc := range []report.Document{report.DocVerify, report.DocHome, report.DocState, report.DocDiff,
		report.DocSpace, report.DocReclaim, report.DocRepair, report.DocBudget, report.DocFleet} {
		for _, name := range report.FormatsOf(doc) {
			names[name] = true
		}
	}
	if !names["json"] || !names["sarif"] || !names["png"] {
		t.Fatalf("the format table lists only %v", names)
	}
	for _, f := range goFiles(t) {
		if !strings.HasPrefix(f.pkg, "cmd/") || f.test {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && names[s] {
					t.Errorf("%s: names the format %q (formats are chosen in the format table)", f.fset.Position(lit.Pos()), s)
				}
			}
			return true
		})
	}
}
