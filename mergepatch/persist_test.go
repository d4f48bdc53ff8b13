package mergepatch

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// refObject is an obviously correct ordered object: the model the
// persistent one is checked against.
type refObject struct {
	keys []string
	vals map[string]string
}

func (r *refObject) apply(key, val string) { // val "" deletes
	_, had := r.vals[key]
	switch {
	case val == "" && had:
		delete(r.vals, key)
		for i, k := range r.keys {
			if k == key {
				r.keys = append(r.keys[:i:i], r.keys[i+1:]...)
				break
			}
		}
	case val != "" && !had:
		r.keys = append(r.keys, key)
		r.vals[key] = val
	case val != "":
		r.vals[key] = val
	}
}

func (r *refObject) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range r.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", k, r.vals[k])
	}
	b.WriteByte('}')
	return b.String()
}

// TestApplyPersistentAgainstModel replays random patches that add, replace
// and delete keys of objects large enough to need several trie levels,
// keeping every intermediate value and checking all of them at the end:
// later merges must not reach into earlier values.
func TestApplyPersistentAgainstModel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	ref := &refObject{vals: map[string]string{}}
	cur := mustParse(t, `{}`)
	type checkpoint struct {
		v    *Value
		want string
	}
	var cps []checkpoint
	keyspace := 1
	for step := range 2000 {
		if step%500 == 0 {
			// Branch from an old checkpoint now and then, as a rollback does.
			if len(cps) > 0 {
				c := cps[rng.IntN(len(cps))]
				cur = c.v
				ref = &refObject{vals: map[string]string{}}
				p := mustParse(t, c.want)
				p.object().each(func(m Member, _ string) bool {
					ref.apply(m.Key, m.Value.String())
					return true
				})
			}
		}
		var patch strings.Builder
		patch.WriteByte('{')
		seen := map[string]bool{}
		for i := range 1 + rng.IntN(6) {
			var key string
			if rng.IntN(3) == 0 && len(ref.keys) > 0 {
				key = ref.keys[rng.IntN(len(ref.keys))]
			} else {
				keyspace += rng.IntN(2)
				key = fmt.Sprintf("k%d", rng.IntN(keyspace+1))
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			val := fmt.Sprint(step*10 + i)
			if rng.IntN(4) == 0 {
				val = ""
			}
			if patch.Len() > 1 {
				patch.WriteByte(',')
			}
			if val == "" {
				fmt.Fprintf(&patch, "%q:null", key)
			} else {
				fmt.Fprintf(&patch, "%q:%s", key, val)
			}
			ref.apply(key, val)
		}
		patch.WriteByte('}')
		cur = Apply(cur, mustParse(t, patch.String()))
		want := ref.String()
		if got := cur.String(); got != want {
			t.Fatalf("step %d: patch %s\n got %s\nwant %s", step, patch.String(), got, want)
		}
		for _, k := range ref.keys {
			if step%100 != 0 {
				break
			}
			if v, ok := cur.Get(k); !ok || v.String() != ref.vals[k] {
				t.Fatalf("step %d: Get(%q) = %v, %v; want %s", step, k, v, ok, ref.vals[k])
			}
		}
		cps = append(cps, checkpoint{cur, want})
	}
	if len(ref.keys) < 200 {
		t.Fatalf("the model grew to only %d keys: the test does not reach the trie", len(ref.keys))
	}
	for i, c := range cps {
		if got := c.v.String(); got != c.want {
			t.Fatalf("checkpoint %d changed:\n got %s\nwant %s", i, got, c.want)
		}
		if back := mustParse(t, c.want); !Equal(back, c.v) || !Equal(c.v, back) {
			t.Fatalf("checkpoint %d is not Equal to its own encoding", i)
		}
	}
}

// TestApplyAddingKeysIsLinear checks that a patch adding one key allocates
// about as much into an object of 30,000 members as into one of 1,000: the
// merge copies no more than a few trie paths (it used to copy the object).
func TestApplyAddingKeysIsLinear(t *testing.T) {
	perPatch := func(size int) float64 {
		v := mustParse(t, `{"files":{}}`)
		patches := make([]*Value, size)
		for i := range patches {
			patches[i] = mustParse(t, fmt.Sprintf(`{"files":{"file-%06d":{"lines":%d}},"turn":%d}`, i, i, i))
		}
		const measured = 500
		for _, p := range patches[:size-measured] {
			v = Apply(v, p)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, p := range patches[size-measured:] {
			v = Apply(v, p)
		}
		runtime.ReadMemStats(&after)
		if files, _ := v.Get("files"); len(files.Members()) != size {
			t.Fatalf("%d patches gave %d files", size, len(files.Members()))
		}
		return float64(after.TotalAlloc-before.TotalAlloc) / measured
	}
	// The least of three runs: where the key index's tables split depends
	// on the map's random seed, so one window of 500 patches may or may not
	// pay for a split; a cost that grows with the object shows in all three.
	small, large := perPatch(1000), min(perPatch(30000), perPatch(30000), perPatch(30000))
	t.Logf("bytes allocated per patch: %.0f at 1,000 keys, %.0f at 30,000 keys", small, large)
	if large > 2*small {
		t.Errorf("a patch into 30,000 keys allocates %.0f bytes, into 1,000 keys %.0f: merge cost grows with the object", large, small)
	}
}
