package mergepatch

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"unicode/utf8"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
)

// Seeds live in testdata/fuzz/Fuzz*/ (the RFC 7396 examples, the deviation
// cases and inputs the fuzzers found), so plain `go test` runs them.

// FuzzParse checks Parse against encoding/json and the encoding round trip.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if len(data) <= MaxDepth { // too short to nest deeper than MaxDepth
			if want := json.Valid(data) && utf8.Valid(data); (err == nil) != want {
				t.Fatalf("Parse(%q) error = %v, want valid = %v", data, err, want)
			}
		}
		if err != nil {
			return
		}
		enc := v.AppendJSON(nil)
		dups, _, ok := scan(data)
		if !ok || dups != v.DuplicateCount() || dups < len(v.Duplicates()) {
			t.Fatalf("Parse(%q) reported %d duplicates %v, encoding/json tokens show %d", data, v.DuplicateCount(), v.Duplicates(), dups)
		}
		for i, d := range v.Duplicates() {
			if i > 0 && d.Offset <= v.Duplicates()[i-1].Offset || !bytes.HasPrefix(data[d.Offset:], []byte(`"`)) {
				t.Fatalf("Parse(%q): duplicate %d %+v is out of order or not at a key", data, i, d)
			}
		}
		if dups == 0 {
			var want bytes.Buffer
			if err := json.Compact(&want, data); err != nil || !bytes.Equal(enc, want.Bytes()) {
				t.Fatalf("AppendJSON(Parse(%q)) = %q, json.Compact gives %q (%v)", data, enc, want.Bytes(), err)
			}
		}
		if diff := cmp.Diff(decode(t, data), decode(t, enc)); diff != "" { // last duplicate wins, as in encoding/json
			t.Fatalf("Parse(%q) changed the value (-input +encoding):\n%s", data, diff)
		}
		v2, err := Parse(enc)
		if err != nil {
			t.Fatalf("Parse(AppendJSON(Parse(%q))) = %q: %v", data, enc, err)
		}
		if !Equal(v, v2) || !Equal(v2, v) {
			t.Fatalf("Parse(%q) round trip %q is not Equal", data, enc)
		}
		if enc2 := v2.AppendJSON(nil); !bytes.Equal(enc, enc2) {
			t.Fatalf("re-encoding is unstable: %q then %q", enc, enc2)
		}
		if k := v.Kind(); k != Object && k != Null && !bytes.Equal(v.Raw(), enc) {
			t.Fatalf("Raw() = %q, AppendJSON = %q", v.Raw(), enc)
		}
		_ = NullMembers(v)
	})
}

// FuzzApplyVsEvanphx checks the merge-patch laws on any pair of documents
// and compares with evanphx/json-patch where that library follows RFC 7396.
func FuzzApplyVsEvanphx(f *testing.F) {
	f.Fuzz(func(t *testing.T, target, patch []byte) {
		tv, err1 := Parse(target)
		pv, err2 := Parse(patch)
		if err1 != nil || err2 != nil {
			return
		}
		tb, pb := tv.AppendJSON(nil), pv.AppendJSON(nil)
		got, changed := Merge(tv, pv)
		enc := got.AppendJSON(nil)
		mt, mtChanged, ok := MergeText(tv, patch)
		switch {
		case ok && (!bytes.Equal(mt.AppendJSON(nil), enc) || mtChanged != changed):
			t.Fatalf("MergeText(%s, %s) = %s, %v; Merge gives %s, %v", tb, patch, mt.AppendJSON(nil), mtChanged, enc, changed)
		case !ok && tv.Kind() == Object && pv.Kind() == Object && pv.DuplicateCount() == 0 && len(patch) < 5*smallObject:
			// Too short to hold an object of smallObject members.
			t.Fatalf("MergeText(%s, %s) declined a plain object patch", tb, patch)
		}
		if !bytes.Equal(tv.AppendJSON(nil), tb) || !bytes.Equal(pv.AppendJSON(nil), pb) {
			t.Fatalf("Apply(%s, %s) modified its inputs: %s, %s", tb, pb, tv.AppendJSON(nil), pv.AppendJSON(nil))
		}
		if back, err := Parse(enc); err != nil || !Equal(back, got) {
			t.Fatalf("Apply(%s, %s) = %s does not parse back (%v)", tb, pb, enc, err)
		}
		if changed == Equal(got, tv) {
			t.Fatalf("Merge(%s, %s) reports changed %v but gives %s", tb, pb, changed, enc)
		}
		if again := Apply(got, pv); !Equal(again, got) { // merge patches are idempotent
			t.Fatalf("Apply(%s, %s) = %s, applied again = %s", tb, pb, enc, again.AppendJSON(nil))
		}
		if pv.Kind() == Object && len(NullMembers(got)) > len(NullMembers(tv)) {
			t.Fatalf("Apply(%s, %s) = %s added null members", tb, pb, enc)
		}

		// evanphx rejects a non-object target, deletes nulls inside arrays
		// and mangles duplicate keys (see performance.md).
		tdups, _, _ := scan(target)
		pdups, nullInArray, _ := scan(patch)
		if tv.Kind() != Object || tdups+pdups > 0 || nullInArray {
			return
		}
		want, err := jsonpatch.MergePatch(target, patch)
		if err != nil {
			t.Fatalf("jsonpatch.MergePatch(%s, %s): %v", target, patch, err)
		}
		if diff := cmp.Diff(decode(t, want), decode(t, enc)); diff != "" {
			t.Fatalf("Apply(%s, %s) = %s, evanphx gives %s (-evanphx +ours):\n%s", target, patch, enc, want, diff)
		}
	})
}

func decode(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json cannot decode %q: %v", data, err)
	}
	return v
}

// scan walks data with encoding/json's tokenizer, independently of Parse,
// and counts repeated object keys and reports whether some object nested in
// an array has a null member.
func scan(data []byte) (dups int, nullInArray, ok bool) {
	type frame struct {
		obj, inArray, wantKey bool
		keys                  map[string]bool
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return dups, nullInArray, len(stack) == 0
		}
		if err != nil {
			return 0, false, false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.wantKey {
			if key, isKey := tok.(string); isKey {
				if top.keys[key] {
					dups++
				}
				top.keys[key], top.wantKey = true, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, wantKey: true, inArray: top != nil && top.inArray, keys: map[string]bool{}})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{inArray: true})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				top = stack[len(stack)-1]
			} else {
				top = nil
			}
		case nil:
			nullInArray = nullInArray || top != nil && top.obj && top.inArray
		}
		if top != nil && top.obj { // a member value is complete
			top.wantKey = true
		}
	}
}
