package checks

import (
	"fmt"
	"strings"

	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// Streaming frame logs (frames.md); the facts come from package frames.
var framesRules = []*Rule{
	on(Rule{ID: "frames/delta-mismatch", Severity: Error, Since: "0.1.0",
		Title: "a block's concatenated deltas differ from its *_end content or tool-call arguments",
		Doc:   "In a frame log the deltas of a content block, concatenated, equal the content of its text_end, thinking_end or reasoning_summary_end frame, and for a tool call its arguments (compared as JSON values); a block without *_end is compared with the completed message (done, message_end). A difference means frames were lost, reordered or interleaved by two writers: the log no longer says what the model produced. Reclamation leaves such a stream untouched.",
	}, func(e reconstruct.FrameDeltaMismatchEvidence) string {
		return fmt.Sprintf("%v block %v: %v", e.BlockKind, e.ContentIndex, e.Reason)
	}),
	on(Rule{ID: "frames/unterminated", Severity: Warning, Since: "0.1.0",
		Title: "a block whose deltas never end",
		Doc:   "The block has deltas but no *_end, and no completed message confirms them: the stream was cut off (the agent was killed, the log rotated) or failed (error, stopReason error or aborted). The deltas are the only record of what was streamed, so reclamation keeps them.",
	}, func(e reconstruct.FrameUnterminatedEvidence) string {
		return fmt.Sprintf("%v block %v: %v deltas (%v bytes of text) never end, %v; reclamation keeps them",
			e.BlockKind, e.ContentIndex, e.Deltas, e.DeltaBytes, e.Reason)
	}),
	on(Rule{ID: "frames/superseded-bytes", Severity: Info, Since: "0.1.0",
		Title: "bytes held by superseded deltas (what reclamation would free)",
		Doc:   "Every streaming frame carries the whole partial message, often twice, so a logged or staged stream grows with the square of the response length: a reasoning-heavy turn of a few thousand tokens crosses a 16 MiB staging cap. A *_delta frame is superseded once its block's *_end frame or the completed message carries the complete content. Reported once per log with the bytes reclamation frees and their share of the log; streams it must keep whole (a kept frame over the 16 MiB cap, more than 10,000 frames, an unreadable line, a delta mismatch) are counted apart.",
		Fix:   "move the superseded delta frames (with the message_update wrapping each) to FILE.quarantine.jsonl; every other frame stays byte for byte; all or nothing per stream", OptIn: true,
		plan: reclaimFrames,
	}, func(e reconstruct.FrameSupersededBytesEvidence) string {
		return supersededMessage(e)
	}),
	on(Rule{ID: "frames/unknown-type", Severity: Info, Since: "0.1.0",
		Title: "a frame type this version does not know (kept verbatim, counted)",
		Doc:   "A line of a frame log whose type, or assistantMessageEvent.type inside message_update, is neither a frame type of frames.md nor an agent lifecycle event (agent_start, turn_start, tool_execution_*). The frame is kept byte for byte and takes no part in the replay; a newer agent may have added it. Reported once per type with the count.",
	}, func(e reconstruct.FrameUnknownTypeEvidence) string {
		if e.Type == "" {
			return inThisFile("frame without a type (kept verbatim)", e.Count)
		}
		return inThisFile(fmt.Sprintf("unknown frame type %q (kept verbatim)", e.Type), e.Count)
	}),
}

func supersededMessage(e reconstruct.FrameSupersededBytesEvidence) string {
	var b strings.Builder
	if e.Bytes > 0 {
		fmt.Fprintf(&b, "superseded delta frames hold %s of this %s log (%.1f%%) in %s: `rollout repair --fix frames/superseded-bytes` frees them",
			sizeText(e.Bytes), sizeText(e.LogBytes), 100*e.Ratio, plural(int64(e.Streams), "stream"))
	}
	if e.RejectedStreams > 0 {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s holding %s of superseded deltas must be kept whole (a delta mismatch, an unreadable line, or a frame over the cap)",
			plural(int64(e.RejectedStreams), "stream"), sizeText(e.RejectedBytes))
	}
	return b.String()
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
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

// reclaimFrames plans the reclamation of a frame log (frames.md): the
// superseded delta frames of every stream the replay could reclaim, as
// package frames decided them during the analysis (all or nothing per
// stream, caps applied). They go to quarantine like every line repair
// removes: dropping them loses no content (the *_end frames and the
// completed messages, kept byte for byte, carry it), but repair never
// deletes bytes, so they stay recoverable until the quarantine is removed.
func reclaimFrames(p *planner, f Finding) string {
	if len(p.facts.frameDrop) == 0 {
		return "no stream can be reclaimed (a delta mismatch, an unreadable line, or a frame over the cap)"
	}
	for _, r := range p.facts.frameDrop {
		for line := r.From; line <= r.To; line++ {
			p.addLineEdit(line, "drop", rollout.EditDrop, f.Rule)
		}
	}
	return ""
}
