package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

func TestTableAndTargets(t *testing.T) {
	res := func(key string, mbps float64, rss int64) *rowResult {
		for _, s := range rowSpecs {
			if s.key == key {
				return &rowResult{spec: s, runs: 3, bytes: 1e9, best: time.Duration(float64(time.Second) * 1000 / mbps), rssKiB: rss}
			}
		}
		t.Fatalf("no row %s", key)
		return nil
	}
	by := map[string]*rowResult{
		"wc": res("wc", 10000, 2048), "jq": res("jq", 200, 20000), "gjson": res("gjson", 1000, 16000),
		"verify": res("verify", 1000, 60*1024), "jobs1": res("jobs1", 500, 1), "jobs2": res("jobs2", 900, 1),
		"repair": res("repair", 100, 1), "repair-write": {spec: rowSpecs[5], state: stUnavailable, note: "not available"},
		"budget": {spec: rowSpecs[6], state: stSkipped, note: "skipped"},
	}
	var rows []*rowResult
	for _, s := range rowSpecs {
		rows = append(rows, by[s.key])
	}
	tab := table(rows, by["jq"], 3)
	for _, want := range []string{
		"| `jq -c .type` | big.jsonl | 200 | 20 | 1.0x |",
		"| `rollout verify --format json` | big.jsonl | 1000 | 60 | 5.0x |",
		"| `rollout repair --write -o OUT` | big.jsonl | not available | | |",
		"| `rollout verify --jobs 2` | many/ | 900 | 0.0 | 4.5x |",
	} {
		if !strings.Contains(tab, want) {
			t.Errorf("table lacks %q:\n%s", want, tab)
		}
	}
	c := runConfig{tJQ: 3, tGJSON: 1.0 / 3, tRSS: 150, tJobs: 1.5, tRepair: 2}
	lines, failed := targets(c, by)
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"target verify >= 3x jq: 5.0x PASS",
		"target verify >= 0.33x gjson-scan: 1.00x PASS",
		"target peak RSS <= 150 MiB: 60 MiB PASS",
		"target jobs2/jobs1 >= 1.5x: 1.80x PASS",
		"target `rollout repair` time <= 2x verify: 10.00x FAIL",
		"target `rollout repair --write -o OUT` time <= 2x verify: n/a",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("targets lack %q:\n%s", want, got)
		}
	}
	if failed != 1 {
		t.Errorf("%d failed targets, want 1", failed)
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
