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

// Repair runs `rollout repair --write -o` on damaged (as if at rel) in a
// scratch directory and returns the result (nil when nothing was fixed).
func Repair(damaged []byte, rel, scratch string) ([]byte, error) {
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
	txn, err := repair.Begin(repair.Options{Path: in, Output: out, Write: true, Now: repairClock})
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
			if fixed, err = Repair(damaged, rel, filepath.Join(work, "repair")); err == nil && fixed != nil {
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
