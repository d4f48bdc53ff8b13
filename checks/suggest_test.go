package checks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSuggest(t *testing.T) {
	tests := []struct {
		sel  string
		want []string
	}{
		{"item/missng-id", []string{"item/missing-id"}},
		{"ordnal/", []string{"ordinal/"}},
		{"missing-id", []string{"agentcomm/missing-id", "item/missing-id"}},
		{"line/torn", []string{"line/torn-tail"}},
		{"zzzzzzzz/qqqqqqq", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Suggest(tt.sel)); diff != "" {
			t.Errorf("Suggest(%q) (-want +got):\n%s", tt.sel, diff)
		}
	}
}
