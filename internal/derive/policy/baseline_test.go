package policy

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
)

func TestRoundTripAndCounts(t *testing.T) {
	t.Parallel()
	var b recorder
	b.add("fp2", "line/blank", "s/b.jsonl", 7, "blank line")
	b.add("fp1", "item/missing-id", "s/a.jsonl", 3, "no id")
	b.add("fp2", "line/blank", "s/b.jsonl", 8, "blank line") // same record content twice
	var buf bytes.Buffer
	if err := writeBaseline(&buf, b.file("rollout")); err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": 1,
  "tool": "rollout",
  "findings": [
    {
      "fingerprint": "fp1",
      "rule": "item/missing-id",
      "path": "s/a.jsonl",
      "line": 3,
      "message": "no id",
      "count": 1
    },
    {
      "fingerprint": "fp2",
      "rule": "line/blank",
      "path": "s/b.jsonl",
      "line": 7,
      "message": "blank line",
      "count": 2
    }
  ]
}
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Fatalf("baseline file mismatch (-want +got):\n%s", diff)
	}
	set, err := ReadBaseline(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range []struct {
		fp   string
		want bool
	}{{"fp2", true}, {"fp2", true}, {"fp2", false}, {"fp1", true}, {"fp1", false}, {"fp3", false}} {
		if got := set.suppress(tt.fp); got != tt.want {
			t.Errorf("step %d: suppress(%s) = %v, want %v", i, tt.fp, got, tt.want)
		}
	}
}

func TestReadRejects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{`{"version": 2, "tool": "rollout", "findings": []}`, "baseline version 2, want 1"},
		{`{"version": 1, "findings": [], "extra": true}`, `unknown field "extra"`},
		{`{"timestamp":"2026"}`, "not a rollout baseline"},
	} {
		if _, err := ReadBaseline(strings.NewReader(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadBaseline(%s) error = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// fingerprinted is a file whose findings have the given fingerprints.
func fingerprinted(fps ...string) *file {
	in := analysed("s/a.jsonl", "")
	for i := range fps {
		in.Result.Findings = append(in.Result.Findings, finding("line/blank", i+1, checks.Warning))
	}
	f := newFile(in)
	f.fingerprints = fps
	return f
}

func TestRecordBaseline(t *testing.T) {
	t.Parallel()
	f := fingerprinted("fp1", "fp1", "fp2")
	recordBaseline{}.process(f)
	if len(f.entry.Findings) != 3 || f.suppressed != 0 {
		t.Fatalf("no baseline written: %d findings, %d suppressed; want 3, 0", len(f.entry.Findings), f.suppressed)
	}
	r := &recorder{}
	recordBaseline{r}.process(f)
	if len(f.entry.Findings) != 0 || f.suppressed != 3 {
		t.Errorf("recorded: %d findings left, %d suppressed; want 0, 3", len(f.entry.Findings), f.suppressed)
	}
	got := r.file("rollout").Findings
	if len(got) != 2 || got[0].Fingerprint != "fp1" || got[0].Count != 2 || got[0].Line != 1 || got[1].Count != 1 {
		t.Errorf("baseline entries %+v, want fp1 at line 1 twice, fp2 once", got)
	}
}

func TestSuppressBaseline(t *testing.T) {
	t.Parallel()
	accepted, err := ReadBaseline(strings.NewReader(`{"version": 1, "tool": "rollout", "findings": [
		{"fingerprint": "fp1", "rule": "line/blank", "path": "s/a.jsonl", "line": 1, "message": "", "count": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := fingerprinted("fp1", "fp1", "fp2")
	suppressBaseline{}.process(f)
	if len(f.entry.Findings) != 3 {
		t.Fatalf("no baseline read: %d findings, want 3", len(f.entry.Findings))
	}
	suppressBaseline{accepted}.process(f)
	if diff := cmp.Diff([]string{"fp1", "fp2"}, f.fingerprints); diff != "" {
		t.Errorf("kept (-want +got): a count of one suppresses one finding:\n%s", diff)
	}
	if f.suppressed != 1 || f.entry.Findings[0].Line != 2 {
		t.Errorf("suppressed %d, first kept line %d; want 1, 2", f.suppressed, f.entry.Findings[0].Line)
	}
}
