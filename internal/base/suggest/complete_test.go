package suggest

import (
	"slices"
	"testing"
)

func TestComplete(t *testing.T) {
	values := []string{"ordinal/", "ordinal/gap", "item/missing-id", "item/id-prefix-mismatch"}
	for _, tt := range []struct {
		partial string
		list    bool
		want    []string
	}{
		{"", false, values},
		{"item/m", false, []string{"item/missing-id"}},
		{"x", false, nil},
		{"ordinal/,item/m", true, []string{"ordinal/,item/missing-id"}},
		{"item/missing-id,", true, []string{"item/missing-id,ordinal/", "item/missing-id,ordinal/gap", "item/missing-id,item/id-prefix-mismatch"}},
		{"ord", true, []string{"ordinal/", "ordinal/gap"}},
	} {
		got := Complete(values, tt.partial)
		if tt.list {
			got = CompleteList(values, tt.partial)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("complete %q (list %v) = %q, want %q", tt.partial, tt.list, got, tt.want)
		}
	}
}
