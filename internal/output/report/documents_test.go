package report

import (
	"bytes"
	"flag"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/derive/resumeinput"
	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/derive/stateview"
	"github.com/rollout-dev/rollout/internal/edit/reclaim"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/output/chart"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/bloatgen"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// -update-documents rewrites testdata/documents/*.golden from the printers;
// read each rewritten golden against the testscript named for its document
// below before committing it.
var updateDocuments = flag.Bool("update-documents", false, "rewrite testdata/documents/*.golden")

// The inputs of the goldens are those of the testscripts, so that what a
// script pins (in full or by pattern) corroborates the golden:
//
//   - budget: fixtures/budget/basic.jsonl at --window 64k,70k,100k,200k;
//     text is testdata/budget/table.txtar's sweep.golden, csv is
//     csv.txtar's sweep.csv (byte for byte, checked below).
//   - fleet: fixtures/budget/fleet at --window 128k,258400; text and csv
//     are testdata/budget/fleet.txtar's sweep.txt and sweep.csv.
//   - state: script/state.txtar's paginated.jsonl (its patterns).
//   - input: fixtures/demo's rollout (state --items).
//   - diff: script/diff.txtar's parent.jsonl and fork.jsonl; text is its
//     want-fork.txt.
//   - space and reclaim: bloatgen's tree, as script/space.txtar and
//     script/reclaim.txtar read it, space at --cold-after 0s (every file
//     cold: no age in the output, a zstd estimate for compress); space
//     csv is space.txtar's want.csv but for the frees_compress column, and
//     reclaim text matches reclaim.txtar's patterns.
//   - repair: script/repair_dry_run.txtar's rollout.jsonl (its patterns).
//   - home: built here (a home of another machine's row, as
//     script/home.txtar makes with homesql), in every verify format.
//
// verify's own goldens are testdata/*.golden (printers_test.go).

// scripts is cmd/rollout's testdata, relative to this package.
const scripts = "../../../cmd/rollout/testdata/"

// corroborated are the goldens a testscript pins byte for byte: the file
// and the archive member it must equal.
var corroborated = map[string][2]string{
	"budget.text": {"budget/table.txtar", "sweep.golden"},
	"budget.csv":  {"budget/csv.txtar", "sweep.csv"},
	"fleet.text":  {"budget/fleet.txtar", "sweep.txt"},
	"fleet.csv":   {"budget/fleet.txtar", "sweep.csv"},
	"diff.text":   {"script/diff.txtar", "want-fork.txt"},
}

// TestDocumentGoldens writes every document of the format table in every
// format and compares it with its golden: a format without a golden fails.
func TestDocumentGoldens(t *testing.T) {
	goldens, err := filepath.Abs("testdata/documents")
	if err != nil {
		t.Fatal(err)
	}
	scriptsDir, err := filepath.Abs(scripts)
	if err != nil {
		t.Fatal(err)
	}
	samples := documentSamples(t)
	for _, row := range formatTable() {
		if row.doc == DocVerify {
			continue // testdata/*.golden
		}
		v, ok := samples[row.doc]
		if !ok {
			t.Errorf("no sample of the %s document", row.doc)
			continue
		}
		for _, f := range row.formats {
			if f.Dir {
				continue // tables read back in parquet_test.go
			}
			var b bytes.Buffer
			if err := Write(&b, row.doc, f.Name, v); err != nil {
				t.Errorf("%s %s: %v", row.doc, f.Name, err)
				continue
			}
			if f.Binary != "" {
				checkPNG(t, string(row.doc), b.Bytes())
				continue
			}
			name := string(row.doc) + "." + f.Name
			got := b.String()
			if name == "space.json" {
				got = repeatHash.ReplaceAllString(got, `"hash": "HASH"`)
			}
			compareGolden(t, filepath.Join(goldens, name+".golden"), got)
			if src, ok := corroborated[name]; ok {
				if want := member(t, filepath.Join(scriptsDir, src[0]), src[1]); want != b.String() {
					t.Errorf("%s differs from %s's %s:\n%s", name, src[0], src[1], cmp.Diff(want, b.String()))
				}
			}
		}
	}
	compareGolden(t, filepath.Join(goldens, "repair.plan.golden"), samples[docRepairPlan].(string))
}

// repeatHash is a repeated string's hash in space's JSON: maphash's, with
// a seed made per process (space.go), so it differs from run to run.
var repeatHash = regexp.MustCompile(`"hash": "[0-9a-f]+"`)

// docRepairPlan is the sample of repair's plan, which RepairPrinter
// writes beside the outcome rather than in a --format.
const docRepairPlan Document = "repair plan"

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateDocuments {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", filepath.Base(path), diff)
	}
}

// checkPNG: a PNG image of the charts' size (its bytes depend on the
// rasterizer; the svg golden pins the drawing).
func checkPNG(t *testing.T, doc string, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s png: %v", doc, err)
	}
	if img.Bounds().Dx() == 0 || float64(img.Bounds().Dx())/float64(img.Bounds().Dy()) != float64(chart.Width/chart.Height) {
		t.Errorf("%s png: %v, want the proportions of %v x %v", doc, img.Bounds(), chart.Width, chart.Height)
	}
}

// member is one file of a txtar archive.
func member(t *testing.T, archive, name string) string {
	t.Helper()
	a, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range a.Files {
		if f.Name == name {
			return string(f.Data)
		}
	}
	t.Fatalf("%s has no %s", archive, name)
	return ""
}

// extract writes members of a txtar archive into the working directory,
// each under its base name.
func extract(t *testing.T, archive string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Base(n), []byte(member(t, archive, n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// documentSamples builds one value per document. It works in a temporary
// directory, so that the paths in the outputs are the scripts' names.
func documentSamples(t *testing.T) map[Document]any {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	fixtures, scriptDir := abs("../../../fixtures/budget"), abs(scripts+"script")
	demo, err := filepath.Glob(abs("../../../fixtures/demo") + "/rollout-*.jsonl")
	if err != nil || len(demo) != 1 {
		t.Fatalf("the demo rollout: %v %v", demo, err)
	}
	t.Chdir(t.TempDir())
	copyTo(t, demo[0], "demo.jsonl")
	extract(t, scriptDir+"/state.txtar", "paginated.jsonl")
	extract(t, scriptDir+"/diff.txtar", "parent.jsonl", "fork.jsonl")
	extract(t, scriptDir+"/repair_dry_run.txtar", "d/rollout.jsonl")
	if _, err := bloatgen.Write(".", bloatgen.Options{}); err != nil {
		t.Fatal(err)
	}
	sessions := walk(t, "sessions")
	samples := map[Document]any{
		DocBudget:  budgetSample(t, filepath.Join(fixtures, "basic.jsonl")),
		DocFleet:   fleetSample(t, walk(t, filepath.Join(fixtures, "fleet"))),
		DocState:   StateDoc{Path: "paginated.jsonl", View: stateview.Of(replay(t, "paginated.jsonl"))},
		DocInput:   inputSample(t, "demo.jsonl"),
		DocDiff:    diffSample(t, "parent.jsonl", "fork.jsonl"),
		DocSpace:   spaceSample(t, sessions),
		DocReclaim: reclaimSample(sessions),
		DocHome:    homeSample(),
	}
	samples[DocRepair], samples[docRepairPlan] = repairSample(t, "rollout.jsonl")
	return samples
}

func copyTo(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// walk lists the rollouts under dir, sorted.
func walk(t *testing.T, dir string) []string {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".jsonl" {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(paths)
	return paths
}

func replay(t *testing.T, path string) *reconstruct.State {
	// As state and diff replay it (no --handoff-cap, no lineage).
	st, err := reconstruct.ReplayFile(path, nil, reconstruct.ReplayOptions{MaxLineBytes: rollout.DefaultMaxLineBytes})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func inputSample(t *testing.T, path string) InputDoc {
	st := replay(t, path)
	items, err := resumeinput.Items(st, path, resumeinput.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return InputDoc{Path: path, CodexVersion: st.ResumeVersion(), WriterVersion: st.CLIVersion, Items: items}
}

func budgetSample(t *testing.T, path string) *budget.Result {
	ev, _, err := budget.ReadEvidence(path, nil, reconstruct.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev.Path = "basic.jsonl"
	s := budget.DefaultSettings()
	s.Windows, s.Trace = []int64{64000, 70000, 100000, 200000}, true
	res, err := budget.Simulate(ev, s)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func fleetSample(t *testing.T, paths []string) *budget.Fleet {
	s := budget.DefaultSettings()
	s.Windows = []int64{128000, 258400}
	f, err := budget.RunFleet(budget.FleetRun{Paths: paths, Settings: s, Jobs: 1,
		Problem: func(p budget.FleetProblem) { t.Errorf("fleet: %+v", p) }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func diffSample(t *testing.T, a, b string) *Diff {
	sa, sb := replay(t, a), replay(t, b)
	return NewDiff(DiffSide{Path: a, Records: sa.Records}, DiffSide{Path: b, Records: sb.Records}, stateview.Of(sa), stateview.Of(sb))
}

func spaceSample(t *testing.T, paths []string) SpaceDoc {
	sum := space.NewSummary(space.DefaultTop)
	// Every file cold (--cold-after 0s), so that no age shows.
	sum.ColdAfter, sum.KeepTurns = 0, 20
	for _, p := range paths {
		f, classes, err := space.ReadFile(p, nil, space.ReadOptions{MinRepeat: space.DefaultMinRepeat, Top: space.DefaultTop,
			KeepTurns: 20, ColdAfter: sum.ColdAfter, Now: time.Now(), MaxLineBytes: rollout.DefaultMaxLineBytes})
		if err != nil {
			t.Fatal(err)
		}
		sum.Add(f, classes)
	}
	return SpaceDoc{Summary: sum, Top: space.DefaultTop}
}

func reclaimSample(paths []string) ReclaimDoc {
	policies := []string{space.PolicySupersededCheckpoints, space.PolicyDuplicateExecOutput}
	outcomes := reclaim.Run(paths, reclaim.Options{Policies: policies, Now: time.Now(), ColdAfter: 7 * 24 * time.Hour,
		MaxLineBytes: rollout.DefaultMaxLineBytes, HandoffCap: reconstruct.DefaultHandoffCap}, false)
	return ReclaimDoc{Outcomes: outcomes, Policies: policies}
}

// repairSample is the dry run's outcome and the plan it prints.
func repairSample(t *testing.T, path string) (*repair.Outcome, string) {
	txn, err := repair.Begin(repair.Options{Path: path, MaxLineBytes: rollout.DefaultMaxLineBytes,
		HandoffCap: reconstruct.DefaultHandoffCap})
	if err != nil {
		t.Fatal(err)
	}
	var plan bytes.Buffer
	p := &RepairPrinter{Out: &plan, Err: &plan, Path: path, Say: func(string, ...any) {}, Hint: func(string, ...any) {}}
	p.PrintPlan(&txn.Outcome)
	return txn.Finish(), plan.String()
}

// homeSample is home's report of a row naming a file outside the home.
func homeSample() VerifyDoc {
	const db = "h/state_5.sqlite"
	r := &result.Report{Tool: "rollout", Version: "0.3.0-test", Command: "home",
		Checked: "1 rollouts, 1 threads rows",
		Files: []result.FileResult{{Path: db, Findings: []checks.Finding{{
			Rule: "home/row-outside-home", Severity: checks.Error, Path: db,
			Message: "threads row 01a2334d-969a-7e00-8a86-b43f7987c86f names /srv/old-home/sessions/x.jsonl, outside the home h",
		}}}}}
	r.Normalize()
	return VerifyDoc{Report: r, Options: Options{FailOn: checks.Error}}
}
