package checks

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// TestTruncatedZstdKeepsFindings: a truncated .zst used to give "0
// records" and no finding; the readable part is judged, and the error says
// where reading stopped (issue 11).
func TestTruncatedZstdKeepsFindings(t *testing.T) {
	var plain bytes.Buffer
	plain.WriteString(`{"timestamp":"2026-03-02T10:15:30.120Z","type":"session_meta","payload":{"id":"019cae0b-e4d5-7b40-9d2e-5f1a2b3c4e01","cli_version":"0.107.0"}}` + "\n")
	plain.WriteString("not json\n") // a finding in the readable part
	for i := range 4000 {
		fmt.Fprintf(&plain, `{"timestamp":"2026-03-02T10:15:41.000Z","type":"event_msg","payload":{"type":"agent_message","message":"%d %s"}}`+"\n", i, strings.Repeat("x", i%97))
	}
	var z bytes.Buffer
	w, _ := zstd.NewWriter(&z)
	w.Write(plain.Bytes())
	w.Close()
	cut := z.Bytes()[:z.Len()*2/3]

	dec, _, err := rollout.Decode("r.jsonl.zst", bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunReader("r.jsonl.zst", dec, Options{})
	var re *reconstruct.ReadError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a *ReadError", err)
	}
	if res == nil || res.Records < 100 {
		t.Fatalf("result %+v: the readable part was not judged", res)
	}
	if re.Line != res.Records+1 {
		t.Errorf("read error at line %d after %d records", re.Line, res.Records)
	}
	found := false
	for _, f := range res.Findings {
		found = found || f.Rule == "line/invalid-json" && f.Line == 2
	}
	if !found {
		t.Errorf("the finding on line 2 is missing: %v", res.Findings)
	}
	if !strings.Contains(err.Error(), "ends early (truncated?)") {
		t.Errorf("error %q does not say the stream is truncated", err)
	}
}
