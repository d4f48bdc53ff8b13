package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/rollout"
)

func TestHideBelow(t *testing.T) {
	t.Parallel()
	f := newFile(analysed("a", "", finding("a/info", 1, checks.Info), finding("a/err", 2, checks.Error),
		finding("a/warn", 3, checks.Warning)))
	f.fingerprints = []string{"i", "e", "w"}
	hideBelow{checks.Warning}.process(f)
	if diff := cmp.Diff([]string{"a/err", "a/warn"}, rules(f)); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"e", "w"}, f.fingerprints); diff != "" {
		t.Errorf("fingerprints do not follow their findings (-want +got):\n%s", diff)
	}
	if f.hidden != 1 || f.status != Clean {
		t.Errorf("hidden %d, status %d; want 1, Clean", f.hidden, f.status)
	}
}

func TestNormalizeStep(t *testing.T) {
	t.Parallel()
	dup := finding("a/x", 2, checks.Error)
	f := newFile(analysed("s/a.jsonl", "", dup, finding("a/x", 1, checks.Error), dup))
	f.Result.Findings[1].Path = ""
	normalize{}.process(f)
	if len(f.entry.Findings) != 2 || f.entry.Findings[0].Line != 1 || f.entry.Findings[0].Path != "s/a.jsonl" {
		t.Errorf("normalized findings %+v, want lines 1, 2 with the file's path", f.entry.Findings)
	}
	empty := newFile(Input{Path: "b", Err: rollout.ErrUnknownFormat})
	normalize{}.process(empty)
	if empty.entry.Findings == nil || empty.entry.Error == nil {
		t.Errorf("entry of an unread file: %+v, want [] findings and an error", empty.entry)
	}
}
