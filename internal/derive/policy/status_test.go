package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

func TestRankErrors(t *testing.T) {
	t.Parallel()
	internal := &reconstruct.InternalError{Path: "a", Value: "boom"}
	readErr := &reconstruct.ReadError{Path: "a", Line: 3, Err: errors.New("corrupt zstd")}
	walkErr := &rollout.WalkError{Path: "d/x", Err: fs.ErrPermission}
	missing := fmt.Errorf("open a: %w", fs.ErrNotExist)
	incomplete := finding("line/too-long", 2, checks.Info)
	incomplete.Incomplete = true
	for _, tt := range []struct {
		name string
		in   Input
		want Status
	}{
		{"clean", analysed("a", "", finding("item/missing-id", 1, checks.Error)), Clean},
		{"internal, named", Input{Path: "a", Err: internal, Named: true}, Internal},
		{"internal, walked", Input{Path: "a", Err: internal}, Internal},
		{"named, failed part-way", Input{Path: "a", Err: readErr, Named: true}, Incomplete},
		{"named, walk entry", Input{Path: "d/x", Err: walkErr, Named: true}, Incomplete},
		{"named, missing", Input{Path: "a", Err: missing, Named: true}, Unusable},
		{"walked, missing", Input{Path: "a", Err: missing}, Incomplete},
		{"incomplete finding", analysed("a", "", incomplete), Incomplete},
	} {
		f := newFile(tt.in)
		rankErrors{}.process(f)
		if f.status != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, f.status, tt.want)
		}
	}
}

func TestRankFailOn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		min  checks.Severity
		fs   []checks.Finding
		want Status
	}{
		{checks.Error, []checks.Finding{finding("a/x", 1, checks.Warning)}, Clean},
		{checks.Warning, []checks.Finding{finding("a/x", 1, checks.Warning)}, Failed},
		{checks.Info, nil, Clean},
		{checks.Error + 1, []checks.Finding{finding("a/x", 1, checks.Error)}, Clean}, // --fail-on never
	} {
		f := newFile(analysed("a", "", tt.fs...))
		rankFailOn{tt.min}.process(f)
		if f.status != tt.want {
			t.Errorf("fail-on %v over %v: status %d, want %d", tt.min, tt.fs, f.status, tt.want)
		}
	}
}

func TestStatusKeepsTheWorst(t *testing.T) {
	t.Parallel()
	f := newFile(Input{Path: "a", Err: &reconstruct.InternalError{Path: "a"}})
	rankErrors{}.process(f)
	rankFailOn{checks.Info}.process(f)
	if f.status != Internal {
		t.Errorf("status %d after fail-on, want Internal kept", f.status)
	}
}

// A file with an incomplete finding that the filters drop still ranks the
// run incomplete, and its entry says so: merge, and an incremental run
// that reuses the entry, rank the run as the single run did.
func TestIncompleteOutlivesTheFilter(t *testing.T) {
	t.Parallel()
	incomplete := finding("line/too-long", 2, checks.Info)
	incomplete.Incomplete = true
	filter, err := checks.NewFilter(nil, []string{"line/"})
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Filter: filter, FailOn: checks.Error})
	e := p.File(analysed("a", "", incomplete))
	if len(e.Findings) != 0 || !e.Incomplete || p.Status() != Incomplete {
		t.Fatalf("entry %+v, status %d: want no finding, Incomplete, run incomplete", e, p.Status())
	}
	if s := ReportStatus(&result.Report{Files: []result.FileResult{*e}}, checks.Error); s != Incomplete {
		t.Errorf("ReportStatus of the entry read back: %d, want Incomplete", s)
	}
}
