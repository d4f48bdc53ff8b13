package incremental

import (
	"errors"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/result"
)

func settings() *result.Settings {
	return &result.Settings{Select: []string{}, Ignore: []string{}, PerPathIgnores: map[string][]string{},
		ShowSeverity: "info", MaxLineBytes: 1 << 20, MaxFindingsPerRule: 1000, HandoffCap: 16000, Now: "2026-08-12T00:00:00Z"}
}

func previous(files ...result.FileResult) *result.Report {
	return &result.Report{Tool: "rollout", Version: "1.0", Command: "verify", Settings: settings(), Files: files}
}

func file(path string, mod func(*result.FileResult)) result.FileResult {
	f := result.FileResult{Path: path, ThreadID: "t-" + path, Size: 100, Version: "v1"}
	if mod != nil {
		mod(&f)
	}
	return f
}

func TestReuse(t *testing.T) {
	prev := previous(
		file("plain", nil),
		file("error", func(f *result.FileResult) { f.Error = &result.FileError{Code: result.ErrReadFailed} }),
		file("stdin", func(f *result.FileResult) { f.Version = "" }),
		file("clock", func(f *result.FileResult) { f.DependsOn = []string{result.DependsClock} }),
		file("fork", func(f *result.FileResult) { f.DependsOn = []string{result.DependsLineage} }),
		file("future", func(f *result.FileResult) { f.DependsOn = []string{"weather"} }),
		file("hiding", func(f *result.FileResult) { f.Hidden = 2 }),
	)
	tests := []struct {
		name          string
		path, version string
		size          int64
		now           string // this run's --now ("": the clock)
		want          bool
	}{
		{"unchanged", "plain", "v1", 100, "", true},
		{"grown", "plain", "v1", 101, "", false},
		{"rewritten in place", "plain", "v2", 100, "", false},
		{"new", "other", "v1", 100, "", false},
		{"not analysed then", "error", "v1", 100, "", false},
		{"no version then", "stdin", "", 100, "", false},
		{"clock, same --now", "clock", "v1", 100, "2026-08-12T00:00:00Z", true},
		{"clock, another --now", "clock", "v1", 100, "2026-08-12T01:00:00Z", false},
		{"clock, the clock", "clock", "v1", 100, "", false},
		{"a fork", "fork", "v1", 100, "2026-08-12T00:00:00Z", false},
		{"an unknown dependency", "future", "v1", 100, "2026-08-12T00:00:00Z", false},
		{"hidden, --fail-on above the severity shown", "hiding", "v1", 100, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := settings()
			s.Now = tt.now
			p, err := New(prev, Run{Version: "1.0", Settings: s, FailOn: checks.Error})
			if err != nil {
				t.Fatal(err)
			}
			got := p.Reuse(tt.path, tt.size, tt.version)
			if (got != nil) != tt.want {
				t.Errorf("Reuse(%s) = %v, want reused %v", tt.path, got, tt.want)
			}
		})
	}
}

func TestReuseHiddenThatMayFail(t *testing.T) {
	prev := previous(file("hiding", func(f *result.FileResult) { f.Hidden = 1 }), file("plain", nil))
	prev.Settings.ShowSeverity = "error"
	s := settings()
	s.ShowSeverity = "error"
	p, err := New(prev, Run{Version: "1.0", Settings: s, FailOn: checks.Warning})
	if err != nil {
		t.Fatal(err)
	}
	if p.Reuse("hiding", 100, "v1") != nil {
		t.Errorf("a file that hid findings --fail-on warning counts was reused")
	}
	if p.Reuse("plain", 100, "v1") == nil {
		t.Errorf("a file that hid nothing was read again")
	}
}

func TestNewRefuses(t *testing.T) {
	otherSelect := settings()
	otherSelect.Select = []string{"line/"}
	written := settings()
	written.Baseline = "written"
	budget := previous()
	budget.Command = "simulate-budget"
	for _, tt := range []struct {
		name string
		prev *result.Report
		s    *result.Settings
		want string
	}{
		{"other settings", previous(), otherSelect, `other settings (select [] and ["line/"])`},
		{"--write-baseline", previous(), written, "--write-baseline"},
		{"another command", budget, settings(), `"simulate-budget"`},
	} {
		_, err := New(tt.prev, Run{Version: "1.0", Settings: tt.s})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error naming %s", tt.name, err, tt.want)
		}
		var se *SettingsError
		if errors.As(err, &se) != (tt.name == "other settings") {
			t.Errorf("%s: %T", tt.name, err)
		}
	}
}

// A report of another version (whose rules may judge otherwise), or a
// baseline whose shared counts cannot be known: nothing is reused, and
// Note says why.
func TestNothingReused(t *testing.T) {
	withBaseline := func() *result.Settings { s := settings(); s.Baseline = "sha256:ab"; return s }
	prevBaseline := previous(file("plain", nil))
	prevBaseline.Settings = withBaseline()
	for _, tt := range []struct {
		name string
		prev *result.Report
		run  Run
		want string
	}{
		{"another version", previous(file("plain", nil)), Run{Version: "2.0", Settings: settings()}, "made by rollout 1.0, this is 2.0"},
		{"a baseline, threads unknown", prevBaseline, Run{Version: "1.0", Settings: withBaseline()}, "--manifest"},
	} {
		p, err := New(tt.prev, tt.run)
		if err != nil {
			t.Fatal(err)
		}
		if p.Reuse("plain", 100, "v1") != nil || !strings.Contains(p.Note(), tt.want) {
			t.Errorf("%s: reused, or the note %q does not say %q", tt.name, p.Note(), tt.want)
		}
	}
}

// Under a baseline, a file that shares its thread with another file, in
// the previous run or in this one, is read again: the baseline's counts
// are shared by the thread's files.
func TestReuseBaselineShared(t *testing.T) {
	s := settings()
	s.Baseline = "sha256:ab"
	prev := previous(
		file("a", func(f *result.FileResult) { f.ThreadID = "shared-then" }),
		file("b", func(f *result.FileResult) { f.ThreadID = "shared-then" }),
		file("c", func(f *result.FileResult) { f.ThreadID = "shared-now" }),
		file("d", func(f *result.FileResult) { f.ThreadID = "alone" }),
		file("e", func(f *result.FileResult) { f.ThreadID = "" }),
	)
	prev.Settings = s
	now := map[string]string{"a": "shared-then", "c": "shared-now", "new": "shared-now", "d": "alone", "e": ""}
	p, err := New(prev, Run{Version: "1.0", Settings: s, ThreadIDs: now})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{"a": false, "c": false, "d": true, "e": true} {
		if got := p.Reuse(path, 100, "v1") != nil; got != want {
			t.Errorf("Reuse(%s) reused %v, want %v", path, got, want)
		}
	}
}

func TestSummary(t *testing.T) {
	p := &Previous{}
	p.reused.Store(9812)
	if got, want := p.Summary(10000), "9,812 files unchanged (results reused), 188 read"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	p.reused.Store(1)
	if got, want := p.Summary(1234568), "1 file unchanged (results reused), 1,234,567 read"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
}

func TestNilReusesNothing(t *testing.T) {
	var p *Previous
	if p.Reuse("a", 1, "v") != nil {
		t.Errorf("a nil Previous reused a result")
	}
}
