package checks

import (
	"fmt"
	"strings"
)

// Messages of the frames/ rules (frames.md); the facts come from
// reconstruct/frames through the engine.

func frameMismatchMsg(f map[string]any) string {
	return fmt.Sprintf("%v block %v: %v", f["kind"], f["content_index"], f["reason"])
}

func frameUnterminatedMsg(f map[string]any) string {
	return fmt.Sprintf("%v block %v: %v deltas (%v bytes of text) never end, %v; reclamation keeps them",
		f["kind"], f["content_index"], f["deltas"], f["delta_bytes"], f["reason"])
}

func frameSupersededMsg(f map[string]any) string {
	var b strings.Builder
	bytes, _ := f["bytes"].(int64)
	if bytes > 0 {
		ratio, _ := f["ratio"].(float64)
		fmt.Fprintf(&b, "superseded delta frames hold %s of this %s log (%.1f%%) in %s: `rollout repair --fix frames/superseded-bytes` frees them",
			sizeText(bytes), sizeText(asInt64(f["log_bytes"])), 100*ratio, plural(asInt64(f["streams"]), "stream"))
	}
	if rej := asInt64(f["rejected_streams"]); rej > 0 {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s holding %s of superseded deltas must be kept whole (a delta mismatch, an unreadable line, or a frame over the cap)",
			plural(rej, "stream"), sizeText(asInt64(f["rejected_bytes"])))
	}
	return b.String()
}

func frameUnknownTypeMsg(f map[string]any) string {
	if f["type"] == "" {
		return "frame without a type (kept verbatim)"
	}
	return fmt.Sprintf("unknown frame type %q (kept verbatim)", f["type"])
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func asInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	}
	return 0
}

// sizeText prints a byte count for people: "812 B", "3.4 KiB", "38.2 MiB".
func sizeText(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}
