package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/internal/derive/resumeinput"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// EngineInput replays a rollout with rollout's engine, as `rollout state
// --items --codex-version VERSION` does (the rollouts it continues found
// beside it, in its Codex home), and rebuilds the input Codex version
// sends on resume with the very code that command runs
// (internal/derive/resumeinput). The goldens are resumed by the version
// that made them, which is not always the file's writer (a migrated
// file keeps the cli_version of the Codex that wrote it first).
func EngineInput(path, version string) ([]resumeinput.Item, *reconstruct.State, error) {
	ix := lineage.ForFile(path)
	ro := reconstruct.ReplayOptions{Ancestry: func() *reconstruct.Ancestry { return ix.Ancestry(path) },
		Options: reconstruct.Options{ResumeVersion: version}}
	st, err := reconstruct.ReplayFile(path, nil, ro)
	if err != nil {
		return nil, nil, err
	}
	items, err := resumeinput.Items(st, path, resumeinput.Options{})
	return items, st, err
}

func matches(engine, codex Item) bool { return engine.Key() == codex.Key() }

// Diff describes how got (the engine's history) differs from want (what
// Codex rebuilt), "" when they agree.
func Diff(got, want []Item) string {
	// A plain alignment: the common prefix and suffix, then both middles.
	p := 0
	for p < len(got) && p < len(want) && matches(got[p], want[p]) {
		p++
	}
	if p == len(got) && p == len(want) {
		return ""
	}
	s := 0
	for s < len(got)-p && s < len(want)-p && matches(got[len(got)-1-s], want[len(want)-1-s]) {
		s++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "engine %d items, Codex %d; from item %d:\n", len(got), len(want), p)
	for _, it := range got[p : len(got)-s] {
		fmt.Fprintf(&b, "  only engine: %s\n", it)
	}
	for _, it := range want[p : len(want)-s] {
		fmt.Fprintf(&b, "  only Codex:  %s\n", it)
	}
	return b.String()
}

// RebuiltInput is the part of the oracle's request input Codex rebuilt
// from the rollout, verbatim (nil for a golden made before goldens kept
// the input).
func (o *Oracle) RebuiltInput() []json.RawMessage {
	if len(o.Input) == 0 {
		return nil
	}
	from := 0
	if o.Instructions {
		from = 1
	}
	if from+len(o.Rebuilt) > len(o.Input) {
		return nil
	}
	return o.Input[from : from+len(o.Rebuilt)]
}

// DiffExact compares the engine's rebuilt input with Codex's, item by
// item as JSON values (the order of an object's keys aside): "" when they
// are the same. The one allowance: an item Codex makes itself on resume
// (an aborted output) carries an id newer versions derive themselves
// (fco_ and a UUIDv5), which the engine leaves out.
func DiffExact(got []resumeinput.Item, want []json.RawMessage) string {
	var b strings.Builder
	if len(got) != len(want) {
		fmt.Fprintf(&b, "engine %d items, Codex %d\n", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		w := want[i]
		if got[i].From.Synthesized() && !gjson.GetBytes(got[i].Raw, "id").Exists() {
			if stripped, err := sjson.DeleteBytes(w, "id"); err == nil {
				w = stripped
			}
		}
		var g, c any
		if json.Unmarshal(got[i].Raw, &g) != nil || json.Unmarshal(w, &c) != nil || !reflect.DeepEqual(g, c) {
			fmt.Fprintf(&b, "item %d (line %d) differs at %s\n  engine: %s\n  Codex:  %s\n", i, got[i].From.Line, firstDifference(g, c, "$"),
				abbreviate(string(got[i].Raw), 300), abbreviate(string(compact(want[i])), 300))
		}
	}
	return b.String()
}

// Compare says how the engine's rebuilt input for the rollout at path
// differs from what Codex version sent when it resumed it (o): item by
// item, then, where the oracle keeps the request's input, exactly; ""
// when they agree.
func Compare(path, version string, o *Oracle) (string, error) {
	in, _, err := EngineInput(path, version)
	if err != nil {
		return "", err
	}
	items := make([]Item, len(in))
	for i, it := range in {
		items[i] = ItemOf(it.Raw)
	}
	if d := Diff(items, o.Rebuilt); d != "" {
		return d, nil
	}
	if want := o.RebuiltInput(); want != nil {
		return DiffExact(in, want), nil
	}
	return "", nil
}

// firstDifference is the path of the first place two JSON values differ,
// and how.
func firstDifference(a, b any, path string) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return path + " (an object against another type)"
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if _, ok := y[k]; !ok {
				return path + "." + k + " (only the engine's)"
			}
			if !reflect.DeepEqual(x[k], y[k]) {
				return firstDifference(x[k], y[k], path+"."+k)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(y)) {
			if _, ok := x[k]; !ok {
				return path + "." + k + " (only Codex's)"
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path + " (arrays of other lengths or types)"
		}
		for i := range x {
			if !reflect.DeepEqual(x[i], y[i]) {
				return firstDifference(x[i], y[i], fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	return path
}

func compact(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
