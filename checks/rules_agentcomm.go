package checks

import (
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

// Inter-agent messages.
var agentcommRules = []*Rule{
	on(Rule{ID: "agentcomm/missing-id", Severity: Warning, Since: "0.1.0",
		Title: "an inter_agent_communication without id in a file that uses ids",
		Doc:   "Inter-agent messages carry amsg_ ids in files that use item ids.",
		Fix:   "assign amsg_<uuidv7>",
		plan:  func(p *planner, f Finding) string { return assignID(p, f, -1, rollout.TypeInterAgent) },
	}, func(reconstruct.AgentCommMissingIDEvidence) string {
		return "inter_agent_communication has no id; expected amsg_<uuidv7>"
	}),
}
