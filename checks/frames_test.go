package checks_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/framegen"
	"github.com/rollout-dev/rollout/rollout"
)

func countRule(fs []checks.Finding, rule string) int {
	n := 0
	for _, f := range fs {
		if f.Rule == rule {
			n++
		}
	}
	return n
}

// TestFramesVerifyAgreesWithRepair: on generated frame logs, complete and
// cut off, verify reports the era as frames and exactly the bytes repair's
// reclamation (--fix frames/superseded-bytes) frees; the reclaimed log has
// nothing left to reclaim, no mismatch, and the same unterminated blocks.
func TestFramesVerifyAgreesWithRepair(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range 60 {
		o := framegen.Options{
			Seed: rng.Uint64(), Turns: 1 + rng.IntN(3), IncrementBytes: 1 + rng.IntN(300), Style: framegen.Style(rng.IntN(3)),
			Blocks: []framegen.BlockSpec{{Kind: framegen.Thinking, Increments: rng.IntN(9)}, {Kind: framegen.Text, Increments: 1 + rng.IntN(9)}},
		}
		var buf bytes.Buffer
		if _, err := framegen.Write(&buf, o); err != nil {
			t.Fatal(err)
		}
		log := buf.Bytes()
		if i%2 == 1 {
			log = log[:bytes.LastIndexByte(log[:rng.IntN(len(log))+1], '\n')+1]
		}
		var facts checks.FixFacts
		res, err := checks.RunReader("frames.jsonl", bytes.NewReader(log), checks.Options{}, facts.Observe)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) > 0 && res.State.Era != rollout.EraFrames {
			t.Fatalf("case %d: era %q", i, res.State.Era)
		}
		fp, err := checks.PlanFixes(res, &facts, checks.FixOptions{Fix: checks.FixSet{"frames/superseded-bytes": true}})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := rollout.Rewrite(&out, bytes.NewReader(log), &fp.Plan, rollout.RewriteOptions{}); err != nil {
			t.Fatal(err)
		}
		var reported int64
		for _, f := range res.Findings {
			switch f.Rule {
			case "frames/superseded-bytes":
				reported = f.EvidenceMap()["bytes"].(int64)
			case "frames/unterminated", "frames/unknown-type":
			default:
				t.Fatalf("case %d: unexpected finding %s at line %d: %s", i, f.Rule, f.Line, f.Message)
			}
		}
		if freed := int64(len(log) - out.Len()); reported != freed {
			t.Fatalf("case %d: verify reports %d superseded bytes, repair frees %d", i, reported, freed)
		}
		after, err := checks.RunReader("frames.jsonl", bytes.NewReader(out.Bytes()), checks.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if n := countRule(after.Findings, "frames/superseded-bytes") + countRule(after.Findings, "frames/delta-mismatch"); n != 0 {
			t.Fatalf("case %d: %d superseded/mismatch findings after reclamation", i, n)
		}
		if a, b := countRule(res.Findings, "frames/unterminated"), countRule(after.Findings, "frames/unterminated"); a != b {
			t.Fatalf("case %d: %d unterminated blocks before reclamation, %d after", i, a, b)
		}
	}
}

// TestFramesNotRollouts: a rollout never replays as a frame log, and a
// frame log gets no rollout findings (no session_meta is expected).
func TestFramesNotRollouts(t *testing.T) {
	for _, c := range []struct {
		log  string
		era  rollout.Era
		rule string
	}{
		{`{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"019cae52-3c1a-7b40-9d2e-5f1a2b3c4d5e"}}` + "\n", rollout.EraEnvelope, ""},
		{`{"type":"agent_start"}` + "\n" + `{"type":"agent_end","messages":[]}` + "\n", rollout.EraFrames, ""},
		{`{"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"x"}}` + "\n", rollout.EraFrames, "frames/unterminated"},
		{`{"type":"text_delta","contentIndex":0,"delta":"x"}` + "\n" + `{"type":"text_end","contentIndex":0,"content":"y"}` + "\n", rollout.EraFrames, "frames/delta-mismatch"},
	} {
		res, err := checks.RunReader("x.jsonl", bytes.NewReader([]byte(c.log)), checks.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.State.Era != c.era {
			t.Errorf("%.60s: era %q, want %q", c.log, res.State.Era, c.era)
		}
		if c.era != rollout.EraFrames {
			continue
		}
		var rules []string
		for _, f := range res.Findings {
			rules = append(rules, f.Rule)
		}
		if (c.rule == "" && len(rules) != 0) || (c.rule != "" && (len(rules) != 1 || rules[0] != c.rule)) {
			t.Errorf("%.60s: findings %v, want [%s]", c.log, rules, c.rule)
		}
	}
}
