package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestHashRecords(t *testing.T) {
	t.Parallel()
	in := "{\"a\":1}\r\n{\"b\":2}\n" + strings.Repeat("x", 50) + "\n{\"c\":3}"
	got, err := hashRecords(strings.NewReader(in), []int{0, 2, 1, 3, 4, 9}, 20)
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
		t.Errorf("hashRecords mismatch (-want +got):\n%s", diff)
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	fp := fingerprint("item/missing-id", identity("019c", "a/b.jsonl"), sha("x"))
	if len(fp) != 32 {
		t.Errorf("fingerprint %q is not 32 hex digits", fp)
	}
	for _, other := range []string{
		fingerprint("item/id-prefix-mismatch", identity("019c", "a/b.jsonl"), sha("x")),
		fingerprint("item/missing-id", identity("019d", "a/b.jsonl"), sha("x")),
		fingerprint("item/missing-id", identity("019c", "a/b.jsonl"), sha("y")),
		fingerprint("item/missing-id", identity("", "a/b.jsonl"), sha("x")),
	} {
		if other == fp {
			t.Errorf("fingerprint does not depend on every part: %s", fp)
		}
	}
	if identity("019c", "a.jsonl") != identity("019c", "moved/a.jsonl") {
		t.Error("the thread id alone should identify a file")
	}
	if identity("", `a/b.jsonl`) != "path:a/b.jsonl" {
		t.Errorf("Identity without thread id = %q", identity("", "a/b.jsonl"))
	}
}

func TestFingerprinter(t *testing.T) {
	t.Parallel()
	in := analysed("s/a.jsonl", "019c", finding("a/x", 1, checks.Error), finding("a/x", 2, checks.Error))
	in.Hashes = map[int]string{1: sha("record one")} // line 2: not hashed (standard input)
	f := newFile(in)
	fingerprinter{on: false}.process(f)
	if f.fingerprints != nil {
		t.Fatalf("fingerprints %v without a baseline", f.fingerprints)
	}
	fingerprinter{on: true}.process(f)
	want := []string{
		fingerprint("a/x", "thread:019c", sha("record one")),
		fingerprint("a/x", "thread:019c", "message:a/x here"),
	}
	if diff := cmp.Diff(want, f.fingerprints); diff != "" {
		t.Errorf("fingerprints (-want +got):\n%s", diff)
	}
}
