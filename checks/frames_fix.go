package checks

import "github.com/rollout-dev/rollout/rollout"

// reclaimFrames plans the reclamation of a frame log (frames.md): the
// superseded delta frames of every stream the replay could reclaim, as
// reconstruct/frames decided them during the analysis (all or nothing per
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
			p.add(line, "drop", rollout.Edit{Kind: rollout.EditDrop, Label: f.Rule})
		}
	}
	return ""
}
