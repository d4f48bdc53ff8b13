package suggest

import (
	"slices"
	"strings"
)

// Complete is what shell completion offers for a partial value: the
// values it begins, in their order.
func Complete(values []string, partial string) []string {
	return slices.DeleteFunc(slices.Clone(values), func(v string) bool { return !strings.HasPrefix(v, partial) })
}

// CompleteList completes the last item of a comma-separated list
// ("ordinal/,item/m"), keeping the items before it and offering none of
// them again.
func CompleteList(values []string, partial string) []string {
	done := partial[:strings.LastIndex(partial, ",")+1]
	var out []string
	for _, v := range values {
		if !slices.Contains(strings.Split(done, ","), v) {
			out = append(out, done+v)
		}
	}
	return Complete(out, partial)
}
