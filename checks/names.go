package checks

import "slices"

// Names are the areas ("ordinal/") and ids of the rules --select, --ignore
// and explain take: verify's, or with home those of rollout home.
func Names(home bool) (out []string) {
	for _, r := range Rules() {
		if (r.Area() == "home") != home {
			continue
		}
		if !slices.Contains(out, r.Area()+"/") {
			out = append(out, r.Area()+"/")
		}
		out = append(out, r.ID)
	}
	return out
}
