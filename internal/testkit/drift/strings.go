package drift

import (
	"bufio"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/rollout-dev/rollout/rollout"
)

// maxRun bounds one printable run kept from a binary: a run is cut there
// (Rust string literals are stored back to back, so runs reach tens of KB).
const maxRun = 1 << 20

// Runs calls fn with every run of at least min printable ASCII bytes of r
// (what strings(1) prints), streaming.
func Runs(r io.Reader, min int, fn func(run string)) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var run []byte
	flush := func() {
		if len(run) >= min {
			fn(string(run))
		}
		run = run[:0]
	}
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			flush()
			return nil
		}
		if err != nil {
			return err
		}
		if c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' {
			if len(run) < maxRun {
				run = append(run, c)
			}
			continue
		}
		flush()
	}
}

// FromStrings notes what a binary's printable runs show: the record types
// of its RolloutItem serde tags (TagRun) and the tables and columns its
// SQL creates (SQLColumns).
func (o *Observed) FromStrings(r io.Reader) error {
	var sql []string
	tags := map[string]string{}
	err := Runs(r, 8, func(run string) {
		if t := TagRun(run); len(t.Names) > 0 {
			for _, n := range t.Names {
				tags[n] = t.Context
			}
		}
		if strings.Contains(run, "CREATE TABLE") || strings.Contains(run, "ADD COLUMN") ||
			strings.Contains(run, "create table") || strings.Contains(run, "add column") {
			sql = append(sql, run)
		}
	})
	if err != nil {
		return err
	}
	for n, ctx := range tags {
		o.Add(KindRecord, n, Seen{SourceStrings, ctx})
	}
	for _, s := range sql {
		for tc, stmt := range SQLColumns(s) {
			if strings.HasPrefix(tc, "x.") || strings.HasPrefix(tc, "sqlite_") {
				// SQLite's own: the virtual tables its amalgamation
				// declares as "CREATE TABLE x(...)", its catalog.
				continue
			}
			o.Add(KindColumn, tc, Seen{SourceStrings, stmt})
		}
	}
	return nil
}

// Tags is what TagRun found: the names of the run, and the run's text
// around them, for the report.
type Tags struct {
	Names   []string
	Context string
}

// anchor is the run's known head: serde stores the variant names of
// RolloutItem back to back, and every release since the envelope era
// names these.
var anchorFirst, anchorLast = rollout.TypeSessionMeta, rollout.TypeEventMsg

// TagRun finds the serde tag run of RolloutItem in a printable run: from
// session_meta to event_msg (within 1 KB), and the names after event_msg
// while they are record types. Known record types are cut out by name;
// what lies between two of them, or between the last one and the first
// other known name after the run (a field of the next struct), is a new
// record type (or several, back to back: serde stores no separator).
func TagRun(s string) Tags {
	i := strings.Index(s, anchorFirst)
	for i >= 0 {
		rest := s[i:]
		j := strings.Index(rest, anchorLast)
		if j > 0 && j < 1024 && strings.Contains(rest[:j], rollout.TypeResponseItem) {
			names, end := splitKnown(rest)
			return Tags{Names: names, Context: rest[:min(end+40, len(rest))]}
		}
		k := strings.Index(s[i+1:], anchorFirst)
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return Tags{}
}

// recordNames are the known record types, longest first so that a longer
// name wins over its prefix (inter_agent_communication_metadata over
// inter_agent_communication).
func recordNames() []string {
	var out []string
	for _, t := range rollout.RecordVocabulary {
		out = append(out, t.Name)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// stopNames are the names that follow the run in the binaries read so far
// (the fields of the structs stored next: CompactedItem's, and
// InterAgentCommunication's trigger_turn in 0.164 and 0.165): the run ends
// there.
var stopNames = []string{"replacement_history", "message", "trigger_turn"}

// splitKnown splits the run at s's start into record type names: known
// ones by name, each stretch between two of them as one new name. After
// event_msg a stop name (a field of the next struct) ends the run, and so
// does a stretch with nothing known within 64 bytes after it. end is
// where it stopped.
func splitKnown(s string) (names []string, end int) {
	known := recordNames()
	match := func(at int) string {
		for _, n := range known {
			if strings.HasPrefix(s[at:], n) {
				return n
			}
		}
		return ""
	}
	pos, pastAnchor := 0, false
	for pos < len(s) {
		if e := envelopeName(s[pos:]); e != "" {
			pos += len(e) // the envelope's own keys, which serde stores in the run
			continue
		}
		if n := match(pos); n != "" {
			names = append(names, n)
			pos += len(n)
			pastAnchor = pastAnchor || n == anchorLast
			continue
		}
		if pastAnchor && hasAnyPrefix(s[pos:], stopNames) {
			return names, pos
		}
		next := -1
		for k := pos + 1; k < len(s) && k-pos <= 64; k++ {
			if match(k) != "" || envelopeName(s[k:]) != "" || (pastAnchor && hasAnyPrefix(s[k:], stopNames)) {
				next = k
				break
			}
		}
		if next < 0 || !identifier(s[pos:next]) {
			return names, pos
		}
		names = append(names, s[pos:next])
		pos = next
	}
	return names, pos
}

// envelopeNames are RolloutLine's keys: serde's adjacently tagged enum
// stores its content key ("payload") with the variants (seen in 0.154).
var envelopeNames = []string{"payload", "timestamp", "ordinal"}

func envelopeName(s string) string {
	for _, e := range envelopeNames {
		if strings.HasPrefix(s, e) {
			return e
		}
	}
	return ""
}

func hasAnyPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

var identRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func identifier(s string) bool { return identRE.MatchString(s) }

var (
	createRE = regexp.MustCompile(`(?is)CREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?["` + "`" + `\[]?(\w+)["` + "`" + `\]]?\s*\(`)
	alterRE  = regexp.MustCompile(`(?is)ALTER\s+TABLE\s+["` + "`" + `\[]?(\w+)["` + "`" + `\]]?\s+ADD\s+(?:COLUMN\s+)?["` + "`" + `\[]?(\w+)`)
	renameRE = regexp.MustCompile(`(?is)ALTER\s+TABLE\s+["` + "`" + `\[]?(\w+)["` + "`" + `\]]?\s+RENAME\s+COLUMN\s+\w+\s+TO\s+["` + "`" + `\[]?(\w+)`)
)

// SQLColumns lists the table.column names SQL text creates (CREATE TABLE
// column definitions, ALTER TABLE ... ADD COLUMN, RENAME COLUMN ... TO),
// each with the statement's head as its example.
func SQLColumns(sql string) map[string]string {
	out := map[string]string{}
	head := func(at int) string { return strings.Join(strings.Fields(sql[at:min(at+60, len(sql))]), " ") }
	for _, m := range createRE.FindAllStringSubmatchIndex(sql, -1) {
		table := strings.ToLower(sql[m[2]:m[3]])
		for _, col := range columnDefs(sql[m[1]:]) {
			out[table+"."+col] = head(m[0])
		}
	}
	for _, re := range []*regexp.Regexp{alterRE, renameRE} {
		for _, m := range re.FindAllStringSubmatchIndex(sql, -1) {
			out[strings.ToLower(sql[m[2]:m[3]])+"."+strings.ToLower(sql[m[4]:m[5]])] = head(m[0])
		}
	}
	return out
}

// columnDefs reads the column names of a CREATE TABLE body (s starts
// after its opening parenthesis): the first word of each top-level
// definition that is not a table constraint.
func columnDefs(s string) []string {
	var cols []string
	depth, start := 0, 0
	def := func(d string) {
		f := strings.Fields(d)
		if len(f) == 0 {
			return
		}
		name := strings.ToLower(strings.Trim(f[0], "\"`[]"))
		switch name {
		case "primary", "unique", "foreign", "check", "constraint":
			return
		}
		if identifier(name) {
			cols = append(cols, name)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				def(s[start:i])
				return cols
			}
			depth--
		case ',':
			if depth == 0 {
				def(s[start:i])
				start = i + 1
			}
		}
	}
	return cols // unterminated: what was read
}
