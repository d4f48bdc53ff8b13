package space

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
)

// The summary keeps fixed-size tables as files are added and spools the
// rows: its tables must be what sorting every file at the end gives (ties
// in the order added), and EachFile must give back every file as added.
func TestSummaryStreamsTables(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 38))
	var files []*File
	for i := range 500 {
		f := &File{Path: fmt.Sprintf("f%03d", i), ThreadID: fmt.Sprintf("t%03d", i), DiskBytes: int64(rng.IntN(50)), Bytes: int64(rng.IntN(90)),
			Lines: i, SupersededCheckpoints: int64(rng.IntN(3)), Compactions: rng.IntN(4), UserTurns: rng.IntN(30),
			ByType: []Bucket{{Name: "session_meta", Bytes: 10, Count: 1}}, ByClass: []Bucket{{Name: "payload.id", Bytes: 3, Count: 1}}}
		for range rng.IntN(3) {
			f.Repeats = append(f.Repeats, Repeat{Hash: "h", Class: "c", Size: int64(1 + rng.IntN(5)), Count: int64(1 + rng.IntN(4)), FirstLine: rng.IntN(9)})
		}
		files = append(files, f)
	}
	s := NewSummary(10)
	defer s.Close()
	for _, f := range files {
		s.Add(f, nil)
	}

	want := append([]*File(nil), files...)
	sort.SliceStable(want, func(i, j int) bool { return want[i].DiskBytes > want[j].DiskBytes })
	if got := s.Largest(); !reflect.DeepEqual(got, want[:10]) {
		t.Errorf("Largest: %v\nwant %v", paths(got), paths(want[:10]))
	}
	var reps []LocatedRepeat
	for _, f := range files {
		for _, r := range f.Repeats {
			reps = append(reps, LocatedRepeat{r, f.Path})
		}
	}
	sort.SliceStable(reps, func(i, j int) bool { return reps[i].Wasted() > reps[j].Wasted() })
	if got := s.Repeats(); !reflect.DeepEqual(got, reps[:10]) {
		t.Errorf("Repeats: %v\nwant %v", got, reps[:10])
	}
	var freed int64
	n := 0
	for _, f := range files {
		if f.SupersededCheckpoints > 0 {
			freed += f.SupersededCheckpoints
			n++
		}
	}
	for _, p := range s.Reclaimable() {
		if p.Policy == PolicySupersededCheckpoints && (p.Bytes != freed || p.Files != n) {
			t.Errorf("superseded-checkpoints frees %d bytes in %d files, want %d in %d", p.Bytes, p.Files, freed, n)
		}
	}

	i := 0
	err := s.EachFile(func(f *File) error {
		if i >= len(files) || !reflect.DeepEqual(f, files[i]) {
			t.Fatalf("row %d: %+v, want %+v", i, f, files[min(i, len(files)-1)])
		}
		i++
		return nil
	})
	if err != nil || i != len(files) {
		t.Fatalf("EachFile: %d rows, %v; want %d", i, err, len(files))
	}
	// Read twice (the text and the CSV reports of one run).
	i = 0
	if err := s.EachFile(func(*File) error { i++; return nil }); err != nil || i != len(files) {
		t.Fatalf("EachFile again: %d rows, %v", i, err)
	}
}

func paths(fs []*File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}
