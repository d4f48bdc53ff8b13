package reconstruct_test

import (
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/reconstruct"
)

// TestMigrationLimitOnlyLegacy: the paginated migration reads legacy-mode
// files only, so a record over the limit in a paginated file is not one it
// drops.
func TestMigrationLimitOnlyLegacy(t *testing.T) {
	big := `{"timestamp":"2026-08-12T00:00:01.000Z","ordinal":1,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"` + strings.Repeat("x", 300) + `"}]}}`
	for _, tc := range []struct {
		mode string
		want int
	}{
		{`"history_mode":"paginated",`, 0},
		{``, 1},
	} {
		meta := `{"timestamp":"2026-08-12T00:00:00.000Z","ordinal":0,"type":"session_meta","payload":{` + tc.mode + `"id":"019e2b7c-4d10-7a21-9c3e-5b6a7c8d9e05","cli_version":"0.153.4"}}`
		n := 0
		_, err := reconstruct.Replay(strings.NewReader(meta+"\n"+big+"\n"), reconstruct.ReplayOptions{Options: reconstruct.Options{MigrationLimit: 200}},
			func(o reconstruct.Observation) {
				if o.Kind() == reconstruct.RecordOverMigrationLimit {
					n++
				}
			})
		if err != nil {
			t.Fatal(err)
		}
		if n != tc.want {
			t.Errorf("meta %s: %d records over the limit reported, want %d", tc.mode, n, tc.want)
		}
	}
}
