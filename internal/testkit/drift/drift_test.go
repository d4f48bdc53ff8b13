package drift

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/rollout"
)

// A binary's bytes: Rust string literals back to back between other data.
// The tag run below is 0.171.0's shape with two names rollout does not
// know (dynamic_tools_updated, id_allocation), then CompactedItem's fields.
var fakeBinary = "\x00\x01ELF\x00" +
	"session_metadatal_event_observedrecording_comple\x00\x02" + // session_meta in another word, far from event_msg
	"RecordingCompletedseqcodex_turn_idsession_metadynamic_tools_updatedresponse_iteminter_agent_communication" +
	"inter_agent_communication_metadatacompactedturn_contexttoken_usage_recordworld_statesecurity_risk_score" +
	"event_msgrealtime_itemid_allocationreplacement_historyreplacement_history_metadatawindow_number\x00\x00" +
	"CREATE TABLE IF NOT EXISTS threads (\n    id TEXT PRIMARY KEY,\n    rollout_path TEXT NOT NULL,\n    created_at INTEGER NOT NULL DEFAULT (unixepoch()),\n    UNIQUE (rollout_path)\n);\x00" +
	"ALTER TABLE threads ADD COLUMN attached_to TEXT;\x00\xff" +
	"CREATE TABLE x(type text, name text)\x00" // SQLite's own virtual table declaration

func TestTagRun(t *testing.T) {
	var got []string
	if err := Runs(strings.NewReader(fakeBinary), 8, func(run string) {
		got = append(got, TagRun(run).Names...)
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"session_meta", "dynamic_tools_updated", "response_item", "inter_agent_communication",
		"inter_agent_communication_metadata", "compacted", "turn_context", "token_usage_record", "world_state",
		"security_risk_score", "event_msg", "realtime_item", "id_allocation"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TagRun (-want +got):\n%s", diff)
	}
	// 0.154.0's run holds the envelope's content key.
	if n := TagRun("session_metapayloadresponse_itemcompactedevent_msgrealtime_itemmessagereplacement_history").Names; !cmp.Equal(n, []string{"session_meta", "response_item", "compacted", "event_msg", "realtime_item"}) {
		t.Errorf("TagRun of 0.154.0's run = %v", n)
	}
	// 0.164.0's run is followed by a field of the next struct.
	if n := TagRun("session_metapayloadresponse_itemevent_msgrealtime_itemtrigger_turnmessagereplacement_history").Names; !cmp.Equal(n, []string{"session_meta", "response_item", "event_msg", "realtime_item"}) {
		t.Errorf("TagRun of 0.164.0's run = %v", n)
	}
	// Without the anchor's tail there is no run.
	if n := TagRun("session_metaresponse_itemcompacted").Names; n != nil {
		t.Errorf("TagRun without event_msg = %v", n)
	}
}

func TestSQLColumns(t *testing.T) {
	got := SQLColumns("CREATE TABLE IF NOT EXISTS `jobs` (id INTEGER PRIMARY KEY, kind TEXT CHECK (kind IN ('a', 'b')), payload TEXT, FOREIGN KEY (id) REFERENCES x(id));" +
		"ALTER TABLE jobs ADD COLUMN retries INTEGER NOT NULL DEFAULT 0; alter table Jobs rename column payload to body")
	var names []string
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	want := []string{"jobs.body", "jobs.id", "jobs.kind", "jobs.payload", "jobs.retries"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("SQLColumns (-want +got):\n%s", diff)
	}
}

func TestFromStrings(t *testing.T) {
	o := NewObserved("x")
	if err := o.FromStrings(strings.NewReader(fakeBinary)); err != nil {
		t.Fatal(err)
	}
	if s := o.Names[KindRecord]["id_allocation"]; s.Source != SourceStrings || !strings.Contains(s.Example, "realtime_itemid_allocation") {
		t.Errorf("id_allocation seen as %+v", s)
	}
	cols := keys(o.Names[KindColumn])
	if diff := cmp.Diff([]string{"threads.attached_to", "threads.created_at", "threads.id", "threads.rollout_path"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestAddRollout(t *testing.T) {
	o := NewObserved("x")
	r := `{"timestamp":"t","ordinal":0,"type":"session_meta","payload":{"id":"a","git":{"branch":"main"}}}
{"timestamp":"t","type":"response_item","metadata":{"seq":1},"payload":{"type":"message","content":[{"type":"input_text","text":"hi"}]}}
{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":null}}
`
	if err := o.AddRollout(strings.NewReader(r), "r.jsonl"); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		KindRecord: {"event_msg", "response_item", "session_meta"},
		KindItem:   {"message"},
		KindEvent:  {"token_count"},
		KindField: {"envelope.metadata", "envelope.metadata.seq", "envelope.ordinal", "envelope.timestamp", "envelope.type",
			"event_msg:token_count.info", "event_msg:token_count.type",
			"response_item:message.content", "response_item:message.content[].text", "response_item:message.content[].type", "response_item:message.type",
			"session_meta.git", "session_meta.git.branch", "session_meta.id"},
	}
	for kind, names := range want {
		if diff := cmp.Diff(names, keys(o.Names[kind])); diff != "" {
			t.Errorf("%s (-want +got):\n%s", kind, diff)
		}
	}
	if s := o.Names[KindItem]["message"]; s != (Seen{SourceLive, "r.jsonl:2"}) {
		t.Errorf("message seen as %+v", s)
	}
	if err := o.AddRollout(strings.NewReader("{\"type\":\n"), "bad.jsonl"); err == nil {
		t.Error("a line that is not JSON: no error")
	}
}

// Schema reads a database made here: its tables and their columns.
func TestSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state_5.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT)", "CREATE TABLE logs (ts INTEGER, msg TEXT)", "CREATE INDEX i ON logs(ts)"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	got, err := Schema(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]string{"threads": {"id", "rollout_path"}, "logs": {"ts", "msg"}}, got); diff != "" {
		t.Errorf("Schema (-want +got):\n%s", diff)
	}
}

// Run exits 1 on a name the vocabulary does not list, 0 when it lists
// every one (a wildcard covering what lies below it), 2 on an error.
func TestRunExit(t *testing.T) {
	observe := func(_ context.Context, v string) (*Observed, error) {
		o := NewObserved(v)
		o.Add(KindRecord, "session_meta", Seen{SourceLive, "a:1"})
		o.Add(KindField, "compacted.resume_metadata.dynamic_tools", Seen{SourceLive, "a:2"})
		o.Add(KindColumn, "threads.attached_to", Seen{SourceStrings, "ALTER TABLE threads ADD COLUMN attached_to"})
		return o, nil
	}
	full := Vocabulary{
		KindRecord: {{Name: "session_meta", ReadBy: "rollout"}},
		KindField:  {{Name: "compacted.resume_metadata.*", ReadBy: "reconstruct"}},
		KindColumn: {{Name: "threads.*", Why: "test"}},
	}
	var out bytes.Buffer
	if code, err := Run(context.Background(), []string{"9.9.9"}, &out, full, observe, false); code != 0 || err != nil {
		t.Errorf("all known: exit %d, %v\n%s", code, err, out.String())
	}
	if strings.Contains(out.String(), "NEW") {
		t.Errorf("all known, the report says NEW:\n%s", out.String())
	}
	short := Vocabulary{KindRecord: full[KindRecord], KindField: full[KindField]}
	out.Reset()
	if code, err := Run(context.Background(), []string{"9.9.9"}, &out, short, observe, false); code != 1 || err != nil {
		t.Errorf("a column unknown: exit %d, %v", code, err)
	}
	if want := "  NEW sqlite column threads.attached_to (strings: ALTER TABLE threads ADD COLUMN attached_to)\n"; !strings.Contains(out.String(), want) {
		t.Errorf("report:\n%s\nwant the line %q", out.String(), want)
	}
	failing := func(context.Context, string) (*Observed, error) { return nil, context.Canceled }
	if code, err := Run(context.Background(), []string{"9.9.9"}, &out, full, failing, false); code != 2 || err == nil {
		t.Errorf("an error: exit %d, %v", code, err)
	}
	if code, _ := Run(context.Background(), nil, &out, full, observe, false); code != 2 {
		t.Errorf("no version: exit %d", code)
	}
}

// Every term of rollout's vocabulary is one Known finds.
func TestKnownVocabulary(t *testing.T) {
	for kind, terms := range Known() {
		for _, term := range terms {
			name := strings.TrimSuffix(term.Name, ".*")
			if _, ok := rollout.Known(terms, name); !ok {
				t.Errorf("%s %q not found in its own list", kind, term.Name)
			}
		}
	}
}

// The report folds a new field's members, and a new table's columns, into
// one line each.
func TestReportFolds(t *testing.T) {
	o := NewObserved("9.9.9")
	for _, n := range []string{"compacted.x", "compacted.x.y", "compacted.x[].z", "compacted.w"} {
		o.Add(KindField, n, Seen{SourceLive, "r:1"})
	}
	for _, n := range []string{"jobs.a", "jobs.b", "jobs.c"} {
		o.Add(KindColumn, n, Seen{SourceLive, "state_5.sqlite"})
	}
	fs, unknown := Check(o, Vocabulary{})
	if unknown != 7 {
		t.Errorf("%d unknown, want 7", unknown)
	}
	var b bytes.Buffer
	if err := Report(&b, "9.9.9", fs, false); err != nil {
		t.Fatal(err)
	}
	want := `Codex 9.9.9
  fields:           0 known, 4 new
  sqlite columns:    0 known, 3 new
  NEW field compacted.w (live: r:1)
  NEW field compacted.x and 2 names below it (live: r:1)
  NEW sqlite column jobs.a and 2 more new columns of its table (live: state_5.sqlite)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}
