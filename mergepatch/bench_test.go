package mergepatch

import (
	"fmt"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// worldState returns a ~50 KB world-state-like object: 50 environments,
// each with scalars, a nested object of variables and an array of objects.
func worldState() []byte {
	var b strings.Builder
	b.WriteString(`{"instructions":"` + strings.Repeat("Follow the repository conventions. ", 40) + `","environments":{`)
	for i := range 50 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"env%d":{"cwd":"/home/user/project%d","shell":"bash","sandbox":{"mode":"workspace-write","network":false},"vars":{`, i, i)
		for j := range 12 {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"VAR_%02d":"value-%d-%d-abcdefghijklmnop"`, j, i, j)
		}
		b.WriteString(`},"mounts":[`)
		for j := range 5 {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"src":"/mnt/data%d","dst":"/data%d","ro":true,"size":12345678901234567890}`, j, j)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`},"approval":"on-request","turn":1}`)
	return []byte(b.String())
}

var benchPatch = []byte(`{"environments":{"env17":{"cwd":"/tmp/work","vars":{"VAR_03":null,"NEW":"1"}},"env49":null},"turn":2}`)

func BenchmarkApply(b *testing.B) {
	doc := worldState()
	target, err := Parse(doc)
	if err != nil {
		b.Fatal(err)
	}
	patch, err := Parse(benchPatch)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("document %d bytes, patch %d bytes", len(doc), len(benchPatch))
	b.Run("Apply", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			Apply(target, patch)
		}
	})
	replace, err := Parse([]byte(`{"environments":{"env17":{"cwd":"/tmp/work"}},"turn":2}`))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("ApplyReplaceOnly", func(b *testing.B) { // no key added or removed: indexes are shared
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			Apply(target, replace)
		}
	})
	b.Run("ParsePatch+Apply", func(b *testing.B) { // what replay does per world_state line
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			p, _ := Parse(benchPatch)
			Apply(target, p)
		}
	})
	b.Run("Parse", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			Parse(doc)
		}
	})
	buf := make([]byte, 0, 2*len(doc))
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			buf = target.AppendJSON(buf[:0])
		}
	})
	b.Run("evanphx.MergePatch", func(b *testing.B) { // baseline: re-parses and re-encodes
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := jsonpatch.MergePatch(doc, benchPatch); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReplayAddingKeys is what a replay does per world_state line of
// benchtool's worldstate.jsonl shape: parse a patch adding 1-3 files to
// open_files, merge it and learn whether it changed anything.
func BenchmarkReplayAddingKeys(b *testing.B) {
	const n = 30000
	patches := make([]string, n)
	file := 0
	for i := range patches {
		var p strings.Builder
		p.WriteString(`{"open_files":{`)
		for k := range 1 + i%3 {
			if k > 0 {
				p.WriteByte(',')
			}
			file++
			fmt.Fprintf(&p, `"src/pkg%03d/file%06d.go":{"lines":%d,"dirty":%t}`, file%97, file, (i*7919)%2000, i%2 == 0)
		}
		fmt.Fprintf(&p, `},"turn":%d}`, i)
		patches[i] = p.String()
	}
	base := `{"environment":{"cwd":"/home/dev/app","shell":"zsh"},"open_files":{},"turn":0}`
	b.Run("ParseMerge", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ws, err := ParseString(base)
			if err != nil {
				b.Fatal(err)
			}
			for _, s := range patches {
				p, err := ParseString(s)
				if err != nil {
					b.Fatal(err)
				}
				if next, changed := Merge(ws, p); changed {
					ws = next
				}
			}
		}
	})
	texts := make([][]byte, n)
	for i, s := range patches {
		texts[i] = []byte(s)
	}
	b.Run("MergeText", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ws, err := ParseString(base)
			if err != nil {
				b.Fatal(err)
			}
			for _, s := range texts {
				next, changed, ok := MergeText(ws, s)
				if !ok {
					b.Fatal("MergeText declined a plain patch")
				}
				if changed {
					ws = next
				}
			}
		}
	})
}
