package policy

import (
	"bytes"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
)

// The order is the policy: changing it changes what verify reports.
func TestStepOrder(t *testing.T) {
	t.Parallel()
	var got []string
	for _, s := range New(Options{}).steps {
		got = append(got, s.name())
	}
	want := []string{"errors", "select", "fingerprint", "write-baseline", "baseline", "fail-on", "hide", "normalize"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

// run feeds two files through a pipeline: one with findings, one that
// could not be read.
func run(p *Pipeline) []*result.FileResult {
	a := analysed("s/a.jsonl", "019c", finding("line/blank", 4, checks.Warning), finding("item/missing-id", 2, checks.Error),
		finding("compaction/legacy", 3, checks.Info))
	a.Hashes = map[int]string{2: "h2", 3: "h3", 4: "h4"}
	return []*result.FileResult{p.File(a), p.File(Input{Path: "s/b.jsonl", Err: fs.ErrPermission})}
}

func TestPipeline(t *testing.T) {
	t.Parallel()
	ignore, _ := checks.NewFilter(nil, []string{"compaction/"})
	p := New(Options{Filter: ignore, FailOn: checks.Error, Show: checks.Warning})
	got := run(p)
	want := []*result.FileResult{
		{Path: "s/a.jsonl", Records: 9, Era: "modern", ThreadID: "019c", Findings: []checks.Finding{
			finding("item/missing-id", 2, checks.Error), finding("line/blank", 4, checks.Warning)}},
		{Path: "s/b.jsonl", Findings: []checks.Finding{}, Error: &result.FileError{Code: result.ErrPermission, Message: "permission denied"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	// The walked file that could not be read outranks the error finding.
	if p.Status() != Incomplete || p.Suppressed() != 0 || p.Hidden() != 0 || p.NeedsHashes() || p.Recording() {
		t.Errorf("status %d, %d suppressed, %d hidden, hashes %v, recording %v", p.Status(), p.Suppressed(), p.Hidden(), p.NeedsHashes(), p.Recording())
	}
}

// A baseline written by one run suppresses, in the next, what it recorded:
// the two runs report the same.
func TestPipelineBaselineRoundTrip(t *testing.T) {
	t.Parallel()
	rec := New(Options{FailOn: checks.Error, Show: checks.Warning, WriteBaseline: true})
	written := run(rec)
	if len(written[0].Findings) != 0 || rec.Suppressed() != 3 || rec.Hidden() != 0 || rec.Status() != Incomplete || !rec.NeedsHashes() {
		t.Fatalf("--write-baseline: %d findings, %d suppressed, %d hidden, status %d", len(written[0].Findings), rec.Suppressed(), rec.Hidden(), rec.Status())
	}
	var buf bytes.Buffer
	if err := rec.WriteBaseline(&buf, "rollout"); err != nil {
		t.Fatal(err)
	}
	accepted, err := ReadBaseline(&buf)
	if err != nil {
		t.Fatal(err)
	}
	next := New(Options{FailOn: checks.Error, Show: checks.Warning, Baseline: accepted})
	if diff := cmp.Diff(written, run(next)); diff != "" || next.Suppressed() != 3 || !next.NeedsHashes() || next.Recording() {
		t.Errorf("--baseline: %d suppressed; entries (-written +read):\n%s", next.Suppressed(), diff)
	}
	var none bytes.Buffer
	if err := next.WriteBaseline(&none, "rollout"); err != nil || none.Len() != 0 {
		t.Errorf("a run that records no baseline wrote %q, %v", none.String(), err)
	}
}
