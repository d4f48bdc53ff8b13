// Package view builds the HTML page of `rollout view`: the thread as resume
// rebuilds it, turn by turn, with every finding at its record and the
// context fill chart. It is one of the outputs (internal/output), after
// checks/ in the flow: a Builder is fed the records and observations of the
// one replay (reconstruct.Replay's OnRecord hook and an observer) and keeps
// only what the page shows, with every string clipped, so memory follows
// the number of records shown, never the file size. WithFixes pairs the
// findings with what a dry run of repair (internal/edit) would do and
// FillChart draws the chart; Finish adds the final state and the findings;
// Render writes the page.
package view

import (
	"github.com/rollout-dev/rollout/checks"
)

// Page is everything the page shows.
type Page struct {
	Path        string
	Bytes       int64
	ThreadID    string
	CLIVersion  string
	Era         string
	HistoryMode string
	Records     int

	FirstWindowID, WindowID string
	WindowNumber            int64

	Errors, Warnings, Infos int
	Turns                   []*Turn
	Findings                []*Finding
	Unplaced                []*Finding // findings at a line without a record (an empty file)
	ByRule                  []RuleCount

	ChartSVG  []byte // inline SVG; nil when there is no chart
	ChartNote string // why there is no chart, or what it shows

	Live, Gone int // history items in / not in the resumed history
	Clipped    int // strings cut to Options.MaxText
	Shown      int // records on the page (a run of unreadable lines is one)
	NotShown   int // records past Options.MaxRecords

	// Inherits are the rollouts the thread continues (a fork's or revert's
	// lineage, root first), whose records are not on the page; Inherited
	// is how many items of the resumed history come from them.
	Inherits  []Inherit
	Inherited int

	// Input is what Codex sends on resume (rollout state --items), as
	// ResumeVersion sends it; InputNote says why it is not shown.
	Input         []InputItem
	InputNote     string
	ResumeVersion string
}

// InputItem is one item of what Codex sends on resume.
type InputItem struct {
	Title string // type, and role or name
	Line  int    // the line it is read from, or made for (0: an inherited rollout's)
	Made  string // why Codex makes it itself, for an item on no line of its own
	Block Block  // its JSON, clipped
}

// Inherit is one rollout of a lineage and where the thread's prefix of it
// ends.
type Inherit struct {
	RolloutID string
	Path      string
	EndOffset int64
	Items     int // items of the resumed history read from it
}

// RuleCount is the number of findings of one rule.
type RuleCount struct {
	Rule     string
	Severity string
	Count    int
}

// Turn is one turn segment (the records from one task_started to the next);
// Index 0 holds what comes before the first turn.
type Turn struct {
	Index      int
	ID         string
	Line       int
	Status     string
	RolledBack bool
	Records    []*Entry
}

// Entry is one record (or one object of a concatenated line).
type Entry struct {
	Line     int
	LastLine int // a run of blank or unreadable lines ends here
	Offset   int64
	Kind     string // css class and label: user, assistant, reasoning, tool, output, compaction, ...
	Title    string
	Meta     string // a short detail after the title (ids, sizes)
	Blocks   []Block
	Minor    bool // bookkeeping records (token counts, turn context, event copies): hidden by default

	Output  *Entry  // a tool call's output, shown with the call
	Items   []Child // a compaction's replacement history
	More    int     // replacement items not listed
	History bool    // a model-history item: live or not is decided at Finish
	index   int     // its index inside the line (-1: the payload)
	callID  string

	Anchor   bool   // the first entry of its line: it holds the id L<line>
	Gone     string // why it is not in the resumed history ("" when it is, or does not apply)
	Findings []*Finding
}

// Child is one item of a compaction's replacement history.
type Child struct {
	Kind, Title, Text string
	Gone              bool
}

// Block is one piece of text of a record.
type Block struct {
	Label     string
	Text      string
	Size      int64 // the full size in bytes
	Clipped   bool
	Collapsed bool // shown behind a <details>
	Code      bool // monospace (JSON, tool arguments and outputs)
}

// Finding is a finding with the fix repair would apply.
type Finding struct {
	checks.Finding
	N       int      // 1-based, in file order: the anchor F<N>
	Fix     []string // the changes repair plans for it
	FixNote string   // the fix in words, or why repair leaves it
}
