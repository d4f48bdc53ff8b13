package checks

import (
	"strings"
	"testing"
)

// TestMaxFindingsPerRule: past the limit a rule's findings are counted in
// one summary finding at the last one's line, so a file of a million blank
// lines costs the state, not a million findings (issue 11).
func TestMaxFindingsPerRule(t *testing.T) {
	input := `{"timestamp":"2026-03-02T10:15:30.120Z","type":"session_meta","payload":{"id":"019cae0b-e4d5-7b40-9d2e-5f1a2b3c4e01","cli_version":"0.107.0"}}` + "\n" +
		strings.Repeat("\n", 10) + "not json\n"
	count := func(res *Result, rule string) (n int, summary *Finding) {
		for i, f := range res.Findings {
			if f.Rule != rule {
				continue
			}
			if f.Evidence["omitted"] != nil {
				summary = &res.Findings[i]
				continue
			}
			n++
		}
		return n, summary
	}

	res, err := RunReader("f.jsonl", strings.NewReader(input), Options{MaxFindingsPerRule: 3})
	if err != nil {
		t.Fatal(err)
	}
	n, sum := count(res, "line/blank")
	if n != 3 || sum == nil {
		t.Fatalf("line/blank: %d findings, summary %v; want 3 and a summary", n, sum)
	}
	if sum.Line != 11 || sum.Evidence["omitted"] != 7 || sum.Represents() != 7 {
		t.Errorf("summary at line %d omitting %v; want line 11 omitting 7", sum.Line, sum.Evidence["omitted"])
	}
	if !strings.Contains(sum.Message, "7 more line/blank findings") {
		t.Errorf("summary message %q", sum.Message)
	}
	// Other rules are limited separately.
	if n, sum := count(res, "line/invalid-json"); n != 1 || sum != nil {
		t.Errorf("line/invalid-json: %d findings, summary %v; want 1 and none", n, sum)
	}

	// No limit, or a limit not reached: every finding, no summary.
	for _, max := range []int{0, 10} {
		res, err := RunReader("f.jsonl", strings.NewReader(input), Options{MaxFindingsPerRule: max})
		if err != nil {
			t.Fatal(err)
		}
		if n, sum := count(res, "line/blank"); n != 10 || sum != nil {
			t.Errorf("max %d: %d findings, summary %v; want 10 and none", max, n, sum)
		}
	}
}
