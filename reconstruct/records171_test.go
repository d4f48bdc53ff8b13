package reconstruct_test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/reconstruct"
)

// The conformance golden made by real Codex 0.171.0: a thread started with
// one dynamic tool, compacted once.
func TestDynamicToolsOfGolden(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../internal/testkit/conformance/testdata/0.171.0/dynamic-tools/session/sessions/*/*/*/*.jsonl")
	if len(files) != 1 {
		t.Fatalf("want the dynamic-tools golden's rollout, found %v", files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Where the file says the set is: the last compacted record's line.
	ckpt, line := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line++
		if gjson.GetBytes(sc.Bytes(), "type").String() == "compacted" {
			ckpt = line
		}
	}
	if ckpt == 0 {
		t.Fatal("the golden has no compacted record")
	}
	f.Seek(0, 0)
	var unknown []int
	st, err := reconstruct.Replay(f, reconstruct.ReplayOptions{}, func(o reconstruct.Observation) {
		if _, ok := o.Evidence.(reconstruct.EnvelopeUnknownTypeEvidence); ok {
			unknown = append(unknown, o.Pos.Line)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	dt := st.DynamicTools
	if dt == nil || dt.Source != reconstruct.DynamicToolsFromCheckpoint || dt.Line != ckpt || !slices.Equal(dt.Names, []string{"conformance_lookup"}) {
		t.Errorf("dynamic tools %+v, want conformance_lookup from the checkpoint at line %d", dt, ckpt)
	}
	if len(unknown) > 0 {
		t.Errorf("unknown line types at lines %v", unknown)
	}
}

func TestDynamicToolsAndIDAllocation(t *testing.T) {
	t.Parallel()
	meta := `{"timestamp":"2026-11-20T09:35:30.037Z","ordinal":0,"type":"session_meta","payload":{"id":"01a2365a-93f3-70f3-9efb-c05c7fe1501f","cli_version":"0.171.0","source":"cli","history_mode":"paginated","dynamic_tools":[{"type":"function","name":"lookup","description":"d","inputSchema":{}}]}}`
	update := `{"timestamp":"2026-11-20T09:35:31.000Z","ordinal":1,"type":"dynamic_tools_updated","payload":{"thread_id":"01a2365a-93f3-70f3-9efb-c05c7fe1501f","tools":[{"type":"namespace","name":"crm","description":"d","tools":[{"type":"function","name":"find","description":"d","inputSchema":{}},{"type":"function","name":"open","description":"d","inputSchema":{}}]},{"type":"function","name":"clock","description":"d","inputSchema":{}}]}}`
	alloc := `{"timestamp":"2026-11-20T09:35:32.000Z","ordinal":%d,"type":"id_allocation","payload":{"opaque":true}}`
	tests := []struct {
		name       string
		lines      []string
		wantSource string
		wantNames  []string
		wantAlloc  int // id_allocation records (0: none)
		allocLine  int
	}{
		{"session_meta only", []string{meta}, reconstruct.DynamicToolsFromMeta, []string{"lookup"}, 0, 0},
		{"an update replaces the set", []string{meta, update}, reconstruct.DynamicToolsFromUpdate, []string{"crm.find", "crm.open", "clock"}, 0, 0},
		{"id_allocation kept, newest", []string{meta, strings.Replace(alloc, "%d", "1", 1), strings.Replace(alloc, "%d", "2", 1)},
			reconstruct.DynamicToolsFromMeta, []string{"lookup"}, 2, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var unknown int
			st, err := reconstruct.Replay(strings.NewReader(strings.Join(tt.lines, "\n")+"\n"), reconstruct.ReplayOptions{}, func(o reconstruct.Observation) {
				if _, ok := o.Evidence.(reconstruct.EnvelopeUnknownTypeEvidence); ok {
					unknown++
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if unknown > 0 || st.UnknownTypes > 0 {
				t.Errorf("%d unknown-type observations", unknown)
			}
			if dt := st.DynamicTools; dt == nil || dt.Source != tt.wantSource || !slices.Equal(dt.Names, tt.wantNames) {
				t.Errorf("dynamic tools %+v, want %v from %s", dt, tt.wantNames, tt.wantSource)
			}
			switch a := st.IDAllocation; {
			case tt.wantAlloc == 0 && a != nil:
				t.Errorf("id allocation %+v, want none", a)
			case tt.wantAlloc > 0 && (a == nil || a.Records != tt.wantAlloc || a.Line != tt.allocLine || string(a.Raw) != `{"opaque":true}`):
				t.Errorf("id allocation %+v, want %d records, the newest at line %d", a, tt.wantAlloc, tt.allocLine)
			}
		})
	}
}
