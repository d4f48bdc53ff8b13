package drift

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestLiveObserve runs the extraction against real Codex versions, with
// ROLLOUT_CONFORMANCE_VERSIONS="0.171.0" (installed into the cache when
// missing): the live run writes the records every release writes, and the
// binary's tag run holds the record types the run wrote.
func TestLiveObserve(t *testing.T) {
	versions := strings.Fields(strings.ReplaceAll(os.Getenv("ROLLOUT_CONFORMANCE_VERSIONS"), ",", " "))
	if len(versions) == 0 {
		t.Skip("set ROLLOUT_CONFORMANCE_VERSIONS to run Codex")
	}
	t.Chdir("../../..") // the module root, where the goldens' path is
	for _, v := range versions {
		o, err := Observe(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []string{"session_meta", "response_item", "event_msg", "turn_context", "compacted"} {
			if o.Names[KindRecord][typ].Source != SourceLive {
				t.Errorf("%s: %s not written live: %+v", v, typ, o.Names[KindRecord][typ])
			}
		}
		fresh := NewObserved(v)
		if err := fresh.fromBinary(v); err != nil {
			t.Fatal(err)
		}
		for typ := range o.Names[KindRecord] {
			if _, ok := fresh.Names[KindRecord][typ]; !ok && typ != "token_usage_record" {
				// token_usage_record's tag is stored elsewhere in some
				// builds (0.150.1): the linker shares equal strings.
				t.Errorf("%s: record type %s written but not in the binary's tag run", v, typ)
			}
		}
		if len(fresh.Names[KindColumn]) == 0 {
			t.Errorf("%s: no SQL columns in the binary", v)
		}
	}
}
