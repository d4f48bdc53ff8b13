package reconstruct_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/reconstruct"
)

// TestRejectedIDSent: whether the file's Codex version sends an id the
// API rejects: none before 0.142, every one from 0.142, and from 0.145 on
// the prefixed ones only; unknown without a version.
func TestRejectedIDSent(t *testing.T) {
	ids := []string{"", "019f600f-432e-7673-809a-3f0af552fbb9", "review:rollout:user", "fc_" + strings.Repeat("a", 62), "fc_a:b"}
	for _, tc := range []struct {
		version string
		want    []string // per id: reasons and sent
	}{
		{"0.125.0", []string{"[empty] false", "[unprefixed] false", "[unprefixed charset] false", "[too-long] false", "[charset] false"}},
		{"0.143.0", []string{"[empty] true", "[unprefixed] true", "[unprefixed charset] true", "[too-long] true", "[charset] true"}},
		{"0.144.0-alpha.4", []string{"[empty] true", "[unprefixed] true", "[unprefixed charset] true", "[too-long] true", "[charset] true"}},
		{"0.145.0", []string{"[empty] false", "[unprefixed] false", "[unprefixed charset] false", "[too-long] true", "[charset] true"}},
		{"", []string{"[empty] nil", "[unprefixed] nil", "[unprefixed charset] nil", "[too-long] nil", "[charset] nil"}},
	} {
		var b strings.Builder
		fmt.Fprintf(&b, `{"timestamp":"2026-07-09T18:02:00.000Z","type":"session_meta","payload":{"id":"019f4c97-6f10-7c21-8809-e282ac004000","cli_version":%q}}`+"\n", tc.version)
		for _, id := range ids {
			fmt.Fprintf(&b, `{"timestamp":"2026-07-09T18:02:00.100Z","type":"response_item","payload":{"type":"function_call","id":%q,"name":"x","arguments":"{}","call_id":"c"}}`+"\n", id)
		}
		var got []string
		_, err := reconstruct.Replay(strings.NewReader(b.String()), reconstruct.ReplayOptions{}, func(o reconstruct.Observation) {
			if e, ok := o.Evidence.(reconstruct.ItemRejectedIDEvidence); ok {
				sent := "nil"
				if e.Sent != nil {
					sent = fmt.Sprint(*e.Sent)
				}
				got = append(got, fmt.Sprintf("%v %s", e.Reasons, sent))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("cli_version %q (-want +got):\n%s", tc.version, diff)
		}
	}
}

// TestDuplicateLineFromStream: a line repeated right after itself is a
// copy whether the file can be read again or not (here a stream: the
// previous line is kept, when short, to compare).
func TestDuplicateLineFromStream(t *testing.T) {
	const fx = "../fixtures/real/item-duplicate.v058.txtar"
	for _, tc := range []struct {
		section string
		want    []string
	}{{"rollout.jsonl", []string{"6 5"}}, {"clean.jsonl", nil}} {
		var got []string
		_, err := reconstruct.Replay(strings.NewReader(section(t, fx, tc.section)), reconstruct.ReplayOptions{}, func(o reconstruct.Observation) {
			if e, ok := o.Evidence.(reconstruct.ItemDuplicateEvidence); ok {
				got = append(got, fmt.Sprintf("%d %d", o.Pos.Line, e.FirstLine))
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.section, diff)
		}
	}
}
