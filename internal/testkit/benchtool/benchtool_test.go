package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"200MB": 200e6, "25MiB": 25 << 20, "1.5GB": 1.5e9, "4096": 4096, "64k": 64e3, "10 kib": 10 << 10, "7b": 7,
	} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-1MB", "12XB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

func TestEachLineLongLines(t *testing.T) {
	long := strings.Repeat("x", 3*readBufSize+17)
	in := "{\"a\":1}\n\n" + `{"s":"` + long + "\"}\r\n" + "{\"b\":2}" // last line without \n
	var got []string
	if err := eachLine(strings.NewReader(in), func(l []byte) { got = append(got, string(l)) }); err != nil {
		t.Fatal(err)
	}
	want := []string{`{"a":1}`, "", `{"s":"` + long + `"}`, `{"b":2}`}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %d bytes, want %d", i, len(got[i]), len(want[i]))
		}
	}
	res, err := scanReader(strings.NewReader(in + "\nnot json\n{\"bad\":\"\xff\"}\n"))
	if err != nil || res.lines != 6 || res.blank != 1 || res.invalid != 2 {
		t.Errorf("scanReader = %+v, %v", res, err)
	}
}

func TestTailBuffer(t *testing.T) {
	var b tailBuffer
	for i := 0; i < 1000; i++ {
		b.Write([]byte("line of stderr output\n"))
	}
	b.Write([]byte("the end"))
	s := b.String()
	if !strings.HasPrefix(s, "line of") || !strings.HasSuffix(s, "the end") || len(s) > 4*tailKeep {
		t.Errorf("tailBuffer kept %d bytes: %.40q...%q", len(s), s, s[len(s)-20:])
	}
}

// rowOf is a measured row whose rounds took these CPU seconds (wall
// time twice that).
func rowOf(key string, rss int64, cpus ...float64) *row {
	r := &row{key: key, name: key, input: "in", bytes: 1e9}
	for _, c := range cpus {
		d := time.Duration(c * float64(time.Second))
		r.samples = append(r.samples, sample{cpu: d, wall: 2 * d, rssKiB: rss})
	}
	return r
}

func TestPairedRatiosAndTargets(t *testing.T) {
	// Round 2 ran on a loaded machine: both rows of it are slower, and the
	// paired ratio of that round is like the others.
	verify := rowOf("verify", 60*1024, 1.0, 3.0, 1.1)
	floor := rowOf("floor", 1024, 0.5, 1.4, 0.55)
	s, n := pairedRatio(verify, floor, false)
	if n != 3 || s.lo < 2.0 || s.hi > 2.15 || s.med != 2.0 {
		t.Errorf("pairedRatio = %+v over %d", s, n)
	}
	if got := spreadOf([]float64{3, 1, 2, 10}).med; got != 2.5 {
		t.Errorf("median of 4 = %v", got)
	}
	unavailable := &row{key: "gone", name: "gone", input: "in", state: stUnavailable, note: "not available"}
	rows := []*row{verify, floor, unavailable}
	tab := rowTable(rows, 3)
	for _, want := range []string{
		"| in | `verify` | 1.100 (1.000-3.000) | 2.200 (2.000-6.000) | 909 | 60 |",
		"| in | `gone` | not available | | | |",
	} {
		if !strings.Contains(tab, want) {
			t.Errorf("table lacks %q:\n%s", want, tab)
		}
	}
	tg := newTargets(rows)
	tg.atMost("verify / floor", "verify", "floor", 1.5, false)
	tg.atLeast("floor faster than verify", "floor", "verify", 1.5, false)
	tg.rss("verify", "verify", 150)
	tg.atMost("gone / floor", "gone", "floor", 1, false)
	got := strings.Join(tg.lines, "\n")
	for _, want := range []string{
		"target verify / floor <= 1.5x: 2.00x (2.00-2.14) over 3 paired runs FAIL",
		"target floor faster than verify >= 1.5x: 2.00x (2.00-2.14) over 3 paired runs PASS",
		"target verify peak RSS <= 150 MiB: 60 MiB PASS",
		"target needs `gone`: n/a (`gone` not available)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("targets lack %q:\n%s", want, got)
		}
	}
	if tg.failed != 1 {
		t.Errorf("%d failed targets, want 1", tg.failed)
	}
}

func TestWriteSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perf.md")
	os.WriteFile(path, []byte("# Title\n\nhand-written\n"), 0o644)
	if err := writeSection(path, "run", "table 1\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeSection(path, "shapes", "shapes 1"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	// Hand-written text between and after the sections stays.
	edited := strings.Replace(string(b), "<!-- benchtool:shapes begin", "between\n\n<!-- benchtool:shapes begin", 1) + "\nafter\n"
	os.WriteFile(path, []byte(edited), 0o644)
	if err := writeSection(path, "run", "table 2"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	want := "# Title\n\nhand-written\n\n<!-- benchtool:run begin -->\ntable 2\n<!-- benchtool:run end -->\n\n" +
		"between\n\n<!-- benchtool:shapes begin -->\nshapes 1\n<!-- benchtool:shapes end -->\n\nafter\n"
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	os.WriteFile(path, []byte("<!-- benchtool:run end -->\n"), 0o644)
	if err := writeSection(path, "run", "x"); err == nil {
		t.Error("a lone end marker was accepted")
	}
}

// TestDecoderReuse reads plain and zstd files through one decoder and one
// line reader, as the tree floor does, and gets every file's lines.
func TestDecoderReuse(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, body := range []string{"{\"a\":1}\n{\"b\":2}\n", "{\"c\":3}\n", "{\"d\":4}\nnot json\n"} {
		p := filepath.Join(dir, fmt.Sprintf("rollout-%d.jsonl", i))
		data := []byte(body)
		if i != 1 {
			p += ".zst"
			enc, _ := zstd.NewWriter(nil)
			data = enc.EncodeAll(data, nil)
		}
		os.WriteFile(p, data, 0o644)
		paths = append(paths, p)
	}
	var lr lineReader
	var dec decoder
	defer dec.close()
	var lines, invalid int64
	for range 2 {
		for _, p := range paths {
			err := dec.open(p, func(r io.Reader) error {
				res, err := lr.scan(r)
				lines, invalid = lines+res.lines, invalid+res.invalid
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if lines != 10 || invalid != 2 {
		t.Errorf("%d lines, %d invalid; want 10, 2", lines, invalid)
	}
}

func TestGenStamp(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-o", dir, "-size", "300kB", "-files", "2", "-file-size", "100kB", "-seed", "3"}
	if err := cmdGen(args); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.jsonl")
	fi, err := os.Stat(big)
	if err != nil || fi.Size() < 300e3 {
		t.Fatalf("big.jsonl: %v, %v", fi, err)
	}
	many, _ := filepath.Glob(filepath.Join(dir, "many", "rollout-*.jsonl"))
	if len(many) != 2 {
		t.Fatalf("many: %v", many)
	}
	data, _ := os.ReadFile(big)
	// Up to date: nothing is rewritten.
	mt := fi.ModTime()
	time.Sleep(10 * time.Millisecond)
	if err := cmdGen(args); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(big); !fi2.ModTime().Equal(mt) {
		t.Error("big.jsonl regenerated although the stamp matched")
	}
	// Other options: regenerated, the old many/ files are gone.
	args[9] = "1"
	if err := cmdGen(args); err != nil {
		t.Fatal(err)
	}
	many, _ = filepath.Glob(filepath.Join(dir, "many", "rollout-*.jsonl"))
	if len(many) != 2 {
		t.Fatalf("many after reseed: %v", many)
	}
	if data2, _ := os.ReadFile(big); bytes.Equal(data, data2) {
		t.Error("another seed gave the same big.jsonl")
	}
	// A damaged file is noticed.
	os.WriteFile(big, []byte("{}\n"), 0o644)
	if _, ok := upToDate(dir, genSpec{}); ok {
		t.Error("upToDate with a zero spec")
	}
	st, _ := readStamp(dir)
	if _, ok := upToDate(dir, st.Spec); ok {
		t.Error("upToDate although big.jsonl changed size")
	}
}
