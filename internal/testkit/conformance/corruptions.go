package conformance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/edit/repair"
)

// Corruption damages a rollout the way a crash or a bad tool does. Apply
// returns the damaged bytes and the 1-based line it damaged, or ok false
// when the rollout has nothing it applies to.
type Corruption struct {
	Name string
	// Base is the scenario whose rollout it damages.
	Base  string
	What  string
	Apply func(rollout []byte) (out []byte, line int, ok bool)
	// Fixes are repair's --fix selectors for the damaged file; none: the
	// default set.
	Fixes []string
}

// FixesOf is the Fixes of the corruption named name.
func FixesOf(name string) []string {
	for _, c := range Corruptions {
		if c.Name == name {
			return c.Fixes
		}
	}
	return nil
}

// lines splits a rollout into its lines, each with its newline.
func lines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// editLine rewrites the first line (after skip lines) that pick accepts.
func editLine(b []byte, pick func(line []byte) bool, edit func(line []byte) []byte) ([]byte, int, bool) {
	ls := lines(b)
	for i, l := range ls {
		if i > 0 && pick(l) {
			ls[i] = edit(l)
			return bytes.Join(ls, nil), i + 1, true
		}
	}
	return nil, 0, false
}

func itemType(l []byte, typ string) bool {
	p := gjson.GetBytes(l, "payload")
	if gjson.GetBytes(l, "type").String() != "response_item" {
		return false
	}
	return p.Get("type").String() == typ
}

func assistantMessage(l []byte) bool {
	return itemType(l, "message") && gjson.GetBytes(l, "payload.role").String() == "assistant"
}

var timestampField = regexp.MustCompile(`"timestamp":"[^"]*"`)

// removeFirst removes the first occurrence of field ("key":value) from a
// JSON object's line, with the comma that joins it to a neighbour.
func removeFirst(l []byte, field string) []byte {
	for _, f := range []string{field + ",", "," + field, field} {
		if i := bytes.Index(l, []byte(f)); i >= 0 {
			return append(append([]byte(nil), l[:i]...), l[i+len(f):]...)
		}
	}
	return l
}

// appendRecord adds a record of type typ with payload after the last line,
// at its timestamp and, in a paginated file, with the next ordinal (so
// that nothing but the record's type is new); the line is the added one.
func appendRecord(b []byte, typ, payload string) ([]byte, int, bool) {
	ls := lines(b)
	last := ls[len(ls)-1]
	if !bytes.HasSuffix(last, []byte("\n")) {
		return nil, 0, false
	}
	rec := "{" + string(timestampField.Find(last))
	if o := gjson.GetBytes(last, "ordinal"); o.Exists() {
		rec += `,"ordinal":` + strconv.FormatInt(o.Int()+1, 10)
	}
	rec += `,"type":"` + typ + `","payload":` + payload + "}\n"
	return append(append([]byte(nil), b...), rec...), len(ls) + 1, true
}

// Corruptions are the damages the matrix resumes with every version.
var Corruptions = []Corruption{
	{Name: "torn-tail", Base: "turns3", What: "the last line cut in the middle, no newline (a crash mid-write)",
		Apply: func(b []byte) ([]byte, int, bool) {
			ls := lines(b)
			last := ls[len(ls)-1]
			ls[len(ls)-1] = last[:len(last)/2]
			return bytes.Join(ls, nil), len(ls), true
		}},
	{Name: "no-timestamp", Base: "turns3", What: "the first function call's line without its timestamp",
		Apply: func(b []byte) ([]byte, int, bool) {
			return editLine(b, func(l []byte) bool { return itemType(l, "function_call") },
				func(l []byte) []byte { return removeFirst(l, string(timestampField.Find(l))) })
		}},
	{Name: "missing-id", Base: "turns3", What: "the first assistant message without its id",
		Apply: func(b []byte) ([]byte, int, bool) {
			return editLine(b, func(l []byte) bool { return assistantMessage(l) && gjson.GetBytes(l, "payload.id").Exists() },
				func(l []byte) []byte { return removeFirst(l, `"id":"`+gjson.GetBytes(l, "payload.id").String()+`"`) })
		}},
	{Name: "wrong-prefix-id", Base: "turns3", What: "the first assistant message's id with the prefix fc_ instead of msg_",
		Apply: func(b []byte) ([]byte, int, bool) {
			return editLine(b, func(l []byte) bool {
				return assistantMessage(l) && bytes.HasPrefix([]byte(gjson.GetBytes(l, "payload.id").String()), []byte("msg_"))
			}, func(l []byte) []byte { return bytes.Replace(l, []byte(`"id":"msg_`), []byte(`"id":"fc_`), 1) })
		}},
	{Name: "duplicate-line", Base: "turns3", What: "the first assistant message's line written twice",
		Apply: func(b []byte) ([]byte, int, bool) {
			return editLine(b, assistantMessage, func(l []byte) []byte { return append(append([]byte(nil), l...), l...) })
		}},
	{Name: "glued-record", Base: "turns3", What: "the line before the first function call cut in the middle without its newline, the call's line glued to it (a crash mid-write, then an append)",
		Apply: func(b []byte) ([]byte, int, bool) {
			ls := lines(b)
			for i := 2; i < len(ls); i++ {
				if itemType(ls[i], "function_call") {
					prev := ls[i-1]
					ls[i-1] = append([]byte(nil), prev[:len(prev)/2]...)
					return bytes.Join(ls, nil), i, true
				}
			}
			return nil, 0, false
		}},
	{Name: "orphan-call", Base: "turns3", What: "the first function call's output line removed",
		Apply: func(b []byte) ([]byte, int, bool) {
			return editLine(b, func(l []byte) bool { return itemType(l, "function_call_output") }, func([]byte) []byte { return nil })
		}},
	{Name: "orphan-output", Base: "turns3", What: "the first function call's line removed (its output stays)",
		Apply: func(b []byte) ([]byte, int, bool) {
			return editLine(b, func(l []byte) bool { return itemType(l, "function_call") }, func([]byte) []byte { return nil })
		}},
	{Name: "truncated-compaction", Base: "compact-local", What: "the compacted record cut in the middle, the next lines intact",
		Apply: func(b []byte) ([]byte, int, bool) {
			return editLine(b, func(l []byte) bool { return gjson.GetBytes(l, "type").String() == "compacted" },
				func(l []byte) []byte { return append(append([]byte(nil), l[:len(l)/2]...), '\n') })
		}},
	{Name: "ordinal-gap", Base: "turns3", What: "a token_count line removed from a paginated file (its ordinal missing)",
		Apply: func(b []byte) ([]byte, int, bool) {
			return editLine(b, func(l []byte) bool {
				return gjson.GetBytes(l, "ordinal").Exists() && gjson.GetBytes(l, "payload.type").String() == "token_count"
			}, func([]byte) []byte { return nil })
		}},
	{Name: "no-session-meta", Base: "turns3", What: "the session_meta line removed",
		Apply: func(b []byte) ([]byte, int, bool) {
			ls := lines(b)
			if gjson.GetBytes(ls[0], "type").String() != "session_meta" {
				return nil, 0, false
			}
			return bytes.Join(ls[1:], nil), 1, true
		}},
	{Name: "unknown-item-type", Base: "turns3", What: "a response_item of a type no Codex writes (future_item, with an id and text) after the last line (a newer Codex's item)",
		Apply: func(b []byte) ([]byte, int, bool) {
			return appendRecord(b, "response_item", `{"type":"future_item","id":"fi_0001","text":"an item of a newer Codex"}`)
		}},
	{Name: "unknown-record-type", Base: "turns3", What: "a record of a type no Codex writes (future_record) after the last line (a newer Codex's record)",
		Apply: func(b []byte) ([]byte, int, bool) {
			return appendRecord(b, "future_record", `{"text":"a record of a newer Codex"}`)
		}},
	{Name: "invalid-utf8", Base: "turns3", What: "a byte 0xff inside the first assistant message's text",
		Apply: func(b []byte) ([]byte, int, bool) {
			return editLine(b, assistantMessage, func(l []byte) []byte {
				return bytes.Replace(l, []byte(`"text":"`), []byte("\"text\":\"\xff"), 1)
			})
		}},
	{Name: "invalid-utf8-event", Base: "turns3", What: "a byte 0xff inside the first task_complete event's last_agent_message",
		Apply: func(b []byte) ([]byte, int, bool) {
			return editLine(b, func(l []byte) bool {
				return gjson.GetBytes(l, "payload.type").String() == "task_complete" && gjson.GetBytes(l, "payload.last_agent_message").String() != ""
			}, func(l []byte) []byte {
				return bytes.Replace(l, []byte(`"last_agent_message":"`), []byte("\"last_agent_message\":\"\xff"), 1)
			})
		}},
}

// Pairing corruptions (issue 35): calls and outputs out of their usual
// order, which Codex pairs by call_id wherever they are. Added to
// Corruptions in init to keep them apart from the others.
func init() { Corruptions = append(Corruptions, pairingCorruptions...) }

var pairingCorruptions = []Corruption{
	{Name: "output-before-call", Base: "turns3", What: "the first function call's line and its output's line swapped (a bad merge): the output before its call",
		Apply: func(b []byte) ([]byte, int, bool) {
			ls := lines(b)
			call := slices.IndexFunc(ls, func(l []byte) bool { return itemType(l, "function_call") })
			if call < 0 {
				return nil, 0, false
			}
			id := gjson.GetBytes(ls[call], "payload.call_id").String()
			for i := call + 1; i < len(ls); i++ {
				if itemType(ls[i], "function_call_output") && gjson.GetBytes(ls[i], "payload.call_id").String() == id {
					ls[call], ls[i] = ls[i], ls[call]
					return bytes.Join(ls, nil), call + 1, true
				}
			}
			return nil, 0, false
		},
		// The output is moved after its call, not quarantined.
		Fixes: []string{"default", "tool/orphan-output"}},
	{Name: "duplicate-turn", Base: "turns3", What: "the lines of the first turn with a function call written twice, the copy right after the turn (a sync tool or a bad merge)",
		Apply: func(b []byte) ([]byte, int, bool) {
			ls := lines(b)
			first, last, ok := firstCallTurn(ls)
			if !ok {
				return nil, 0, false
			}
			out := slices.Concat(ls[:last+1], ls[first:last+1], ls[last+1:])
			return bytes.Join(out, nil), last + 2, true
		}},
}

func eventType(l []byte, typ string) bool {
	return gjson.GetBytes(l, "type").String() == "event_msg" && gjson.GetBytes(l, "payload.type").String() == typ
}

// firstCallTurn finds the lines (0-based, inclusive) of the turn holding
// the first function call: task_started to task_complete where Codex
// writes them, else from the turn's prompt (with the messages Codex writes
// before it) to the line before the next turn's.
func firstCallTurn(ls [][]byte) (first, last int, ok bool) {
	call := slices.IndexFunc(ls, func(l []byte) bool { return itemType(l, "function_call") })
	if call < 0 {
		return 0, 0, false
	}
	first = -1
	for i := call; i > 0; i-- {
		if eventType(ls[i], "task_started") {
			first = i
			break
		}
	}
	if first > 0 {
		for i := call + 1; i < len(ls); i++ {
			if eventType(ls[i], "task_complete") {
				return first, i, true
			}
		}
		return 0, 0, false
	}
	// turnStart walks back from a user_message event over the messages
	// Codex writes with the prompt.
	turnStart := func(i int) int {
		for i > 1 && itemType(ls[i-1], "message") && gjson.GetBytes(ls[i-1], "payload.role").String() != "assistant" {
			i--
		}
		return i
	}
	for i := call; i > 0; i-- {
		if eventType(ls[i], "user_message") {
			first = turnStart(i)
			break
		}
	}
	if first < 0 {
		return 0, 0, false
	}
	last = len(ls) - 1
	for i := call + 1; i < len(ls); i++ {
		if eventType(ls[i], "user_message") {
			last = turnStart(i) - 1
			break
		}
	}
	return first, last, true
}

// The corruptions of issue 35's severities and messages: each says what a
// hand, an editor or a sync tool does to a healthy file.
var severityCorruptions = []Corruption{
	{Name: "garbage-line", Base: "turns3", What: "a line that is not JSON (a stray log message) inserted after the first assistant message",
		Apply: func(b []byte) ([]byte, int, bool) {
			return editLine(b, assistantMessage, func(l []byte) []byte {
				return append(append([]byte(nil), l...), "warning: this line is not a record\n"...)
			})
		}},
	{Name: "bom", Base: "turns3", What: "a UTF-8 byte order mark (EF BB BF) before line 1 (an editor saved the file)",
		Apply: func(b []byte) ([]byte, int, bool) {
			return append([]byte("\xef\xbb\xbf"), b...), 1, true
		}},
	{Name: "worldstate-first-patch", Base: "turns3", What: "the first world_state snapshot written as a patch (full false), so no snapshot precedes it",
		Apply: func(b []byte) ([]byte, int, bool) {
			return editLine(b, func(l []byte) bool {
				return gjson.GetBytes(l, "type").String() == "world_state" && gjson.GetBytes(l, "payload.full").Bool()
			}, func(l []byte) []byte { return bytes.Replace(l, []byte(`"full":true`), []byte(`"full":false`), 1) })
		}},
}

func init() { Corruptions = append(Corruptions, severityCorruptions...) }

// CorruptGolden is the record of one corruption resumed by one version,
// committed as testdata/VERSION/corrupt/NAME.json. The damaged file is not
// committed: Corruption.Apply rebuilds it from the base golden (SHA256
// checks that it is the same).
type CorruptGolden struct {
	Version   string  `json:"codex_version"`
	Generated string  `json:"generated"`
	Name      string  `json:"corruption"`
	What      string  `json:"what"`
	Base      string  `json:"base"` // the scenario golden damaged
	Line      int     `json:"line"`
	SHA256    string  `json:"sha256"` // of the damaged file
	Oracle    *Oracle `json:"oracle"`
	// Repaired is Codex resuming `rollout repair`'s result of the damaged
	// file (nil when repair changed nothing), RepairSHA256 that result.
	Repaired     *Oracle `json:"repaired"`
	RepairSHA256 string  `json:"repair_sha256,omitempty"`
}

// Damage reads the base golden of a corruption for version under golden
// dir and applies it: the judged rollout's path relative to the home, the
// damaged bytes and the base's golden.
func Damage(goldenDir, version string, c Corruption) (rel string, damaged []byte, line int, base *Golden, err error) {
	dir := filepath.Join(goldenDir, version, c.Base)
	base, err = ReadGolden(dir)
	if err != nil {
		return "", nil, 0, nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "session", base.Judged))
	if err != nil {
		return "", nil, 0, nil, err
	}
	out, line, ok := c.Apply(b)
	if !ok {
		return base.Judged, nil, 0, base, nil
	}
	return base.Judged, out, line, base, nil
}

// Repair runs `rollout repair --write -o` (with --fix fixes when given) on damaged (as if at rel) in a
// scratch directory and returns the result (nil when nothing was fixed).
func Repair(damaged []byte, rel, scratch string, fixes ...string) ([]byte, error) {
	var sel checks.FixSet
	if len(fixes) > 0 {
		var err error
		if sel, err = checks.SelectFixes(fixes); err != nil {
			return nil, err
		}
	}
	in := filepath.Join(scratch, "in", filepath.Base(rel))
	out := filepath.Join(scratch, "out", filepath.Base(rel))
	for _, d := range []string{filepath.Dir(in), filepath.Dir(out)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(in, damaged, 0o644); err != nil {
		return nil, err
	}
	txn, err := repair.Begin(repair.Options{Path: in, Output: out, Write: true, Now: repairClock, Fix: sel})
	if err != nil {
		return nil, err
	}
	o := txn.Finish()
	if o.Refusal != nil {
		return nil, o.Refusal
	}
	if o.Changes.Len() == 0 && len(o.Quarantined) == 0 {
		return nil, nil
	}
	return os.ReadFile(out)
}

// repairClock judges liveness long after the goldens were made: an
// unanswered call is a dead session's, not a running tool's.
var repairClock = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// WriteCorruptions resumes each corruption of the version's goldens (made
// first) with that version, and the repair of each, and writes
// out/VERSION/corrupt/NAME.json; only, when given, names the corruptions
// to regenerate.
func WriteCorruptions(ctx context.Context, c *Codex, out string, only ...string) error {
	m := NewMock()
	defer m.Close()
	for _, cr := range Corruptions {
		if len(only) > 0 && !slices.Contains(only, cr.Name) {
			continue
		}
		rel, damaged, line, base, err := Damage(out, c.Version, cr)
		if err != nil {
			return err
		}
		if damaged == nil {
			continue
		}
		work, err := NewCaseDir()
		if err != nil {
			return err
		}
		g := &CorruptGolden{Version: c.Version, Generated: time.Now().UTC().Format("2006-01-02"), Name: cr.Name, What: cr.What,
			Base: cr.Base, Line: line, SHA256: sha(damaged)}
		g.Oracle, err = Resume(ctx, c, m, map[string][]byte{rel: damaged}, rel, base.ID, filepath.Join(work, "damaged"), false)
		if err == nil {
			var fixed []byte
			if fixed, err = Repair(damaged, rel, filepath.Join(work, "repair"), cr.Fixes...); err == nil && fixed != nil {
				g.RepairSHA256 = sha(fixed)
				g.Repaired, err = Resume(ctx, c, m, map[string][]byte{rel: fixed}, rel, base.ID, filepath.Join(work, "repaired"), false)
			} else if err != nil {
				err = fmt.Errorf("repair of %s: %w", cr.Name, err)
			}
		}
		os.RemoveAll(work)
		if err != nil {
			return fmt.Errorf("conformance: %s %s: %w", c.Version, cr.Name, err)
		}
		if err := writeJSON(filepath.Join(out, c.Version, "corrupt", cr.Name+".json"), g); err != nil {
			return err
		}
		fmt.Printf("%s corrupt/%s: exit %d, %d items rebuilt; repaired: %v\n", c.Version, cr.Name, g.Oracle.ExitCode, len(g.Oracle.Rebuilt), g.Repaired != nil)
	}
	return nil
}

// Issue 35, points 3 and 4: another rollout's records after the thread's
// own, and an edited session_meta id. Kept apart from the list above so
// that other corruptions can be added without touching these. Goldens:
// foreign-records from 0.142.5 on (0.40.0 to 0.139.0 resume it, but state
// adds an aborted output Codex does not send: the call/output pairing of
// issue 35 point 2), edited-meta-id for the paginated versions, 0.148.0 on.
func init() {
	Corruptions = append(Corruptions,
		Corruption{Name: "foreign-records", Base: "turns3", What: "the first turn's records up to its first call output appended again as another thread's (a bad merge of a sub-agent's rollout): every UUID in them replaced by another, ordinals as they were (restarting)",
			Apply: appendForeignRecords},
		Corruption{Name: "edited-meta-id", Base: "turns3", What: "session_meta.payload.id edited (its last 4 hex digits replaced by beef); the file name and the other records keep the thread id",
			Apply: func(b []byte) ([]byte, int, bool) {
				ls := lines(b)
				id := gjson.GetBytes(ls[0], "payload.id").String()
				if gjson.GetBytes(ls[0], "type").String() != "session_meta" || len(id) != 36 {
					return nil, 0, false
				}
				old := []byte(`"id":"` + id + `"`)
				i := bytes.Index(ls[0], old)
				if i < 0 {
					return nil, 0, false
				}
				l := append([]byte(nil), ls[0]...)
				copy(l[i+len(old)-5:], "beef")
				ls[0] = l
				return bytes.Join(ls, nil), 1, true
			}},
	)
}

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// appendForeignRecords appends lines 2 to the first function_call_output
// with each UUID's last group replaced (the same UUID the same way), so
// that thread, turn and item ids are another thread's while the mock's
// call ids, like a sub-agent's under the same mock, are not.
func appendForeignRecords(b []byte) ([]byte, int, bool) {
	ls := lines(b)
	if len(ls) < 3 || !bytes.HasSuffix(ls[len(ls)-1], []byte("\n")) {
		return nil, 0, false
	}
	end := -1
	for i := 1; i < len(ls); i++ {
		if itemType(ls[i], "function_call_output") {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, 0, false
	}
	out := append([]byte(nil), b...)
	for _, l := range ls[1 : end+1] {
		out = append(out, uuidPattern.ReplaceAllFunc(l, func(u []byte) []byte {
			s := sha256.Sum256(u)
			return append(append([]byte(nil), u[:24]...), hex.EncodeToString(s[:6])...)
		})...)
	}
	return out, len(ls) + 1, true
}
