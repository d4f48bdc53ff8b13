package baseline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestHashRecords(t *testing.T) {
	t.Parallel()
	in := "{\"a\":1}\r\n{\"b\":2}\n" + strings.Repeat("x", 50) + "\n{\"c\":3}"
	got, err := HashRecords(strings.NewReader(in), []int{0, 2, 1, 3, 4, 9}, 20)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{
		0: "",
		1: sha(`{"a":1}`), // without the CRLF
		2: sha(`{"b":2}`),
		3: "size:50", // over the maximum: its length stands in for it
		4: sha(`{"c":3}`),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HashRecords mismatch (-want +got):\n%s", diff)
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	fp := Fingerprint("item/missing-id", Identity("019c", "a/b.jsonl"), sha("x"))
	if len(fp) != 32 {
		t.Errorf("fingerprint %q is not 32 hex digits", fp)
	}
	for _, other := range []string{
		Fingerprint("item/id-prefix-mismatch", Identity("019c", "a/b.jsonl"), sha("x")),
		Fingerprint("item/missing-id", Identity("019d", "a/b.jsonl"), sha("x")),
		Fingerprint("item/missing-id", Identity("019c", "a/b.jsonl"), sha("y")),
		Fingerprint("item/missing-id", Identity("", "a/b.jsonl"), sha("x")),
	} {
		if other == fp {
			t.Errorf("fingerprint does not depend on every part: %s", fp)
		}
	}
	if Identity("019c", "a.jsonl") != Identity("019c", "moved/a.jsonl") {
		t.Error("the thread id alone should identify a file")
	}
	if Identity("", `a/b.jsonl`) != "path:a/b.jsonl" {
		t.Errorf("Identity without thread id = %q", Identity("", "a/b.jsonl"))
	}
}

func TestRoundTripAndCounts(t *testing.T) {
	t.Parallel()
	var b Builder
	b.Add("fp2", "line/blank", "s/b.jsonl", 7, "blank line")
	b.Add("fp1", "item/missing-id", "s/a.jsonl", 3, "no id")
	b.Add("fp2", "line/blank", "s/b.jsonl", 8, "blank line") // same record content twice
	var buf bytes.Buffer
	if err := Write(&buf, b.File("rollout")); err != nil {
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
	set, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range []struct {
		fp   string
		want bool
	}{{"fp2", true}, {"fp2", true}, {"fp2", false}, {"fp1", true}, {"fp1", false}, {"fp3", false}} {
		if got := set.Suppress(tt.fp); got != tt.want {
			t.Errorf("step %d: Suppress(%s) = %v, want %v", i, tt.fp, got, tt.want)
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
		if _, err := Read(strings.NewReader(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Read(%s) error = %v, want %q", tt.in, err, tt.want)
		}
	}
}
