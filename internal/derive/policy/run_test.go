package policy

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rollout-dev/rollout/checks"
)

// TestAnalyseRunsAheadBounded: while the first file cannot be read, the
// workers verify at most aheadFiles-1 of the files after it and then wait:
// what waits to be printed stays bounded however many files follow.
func TestAnalyseRunsAheadBounded(t *testing.T) {
	t.Parallel()
	clean, err := filepath.Abs("../../../fixtures/clean/envelope-legacy.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	inputs := []Target{{Path: "-"}}
	for range aheadFiles + 100 {
		inputs = append(inputs, Target{Path: clean})
	}
	in, feed := io.Pipe()
	var mu sync.Mutex
	steps := 0
	step := func() {
		mu.Lock()
		steps++
		mu.Unlock()
	}
	stepsNow := func() int {
		mu.Lock()
		defer mu.Unlock()
		return steps
	}
	emitted := 0
	atFirst := -1
	done := make(chan struct{})
	go func() {
		defer close(done)
		Analyse(inputs, 4, in, checks.Options{}, false, nil, step, func(i int, _ Input) {
			if i != emitted {
				t.Errorf("emitted file %d after %d files", i, emitted)
			}
			if i == 0 {
				atFirst = stepsNow()
			}
			emitted++
		})
	}()
	// Wait until the other workers have gone as far as they may.
	deadline := time.Now().Add(20 * time.Second)
	for stepsNow() < aheadFiles-1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	clean2, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	feed.Write(clean2)
	feed.Close()
	<-done
	if atFirst > aheadFiles || atFirst < 1 {
		t.Errorf("%d files verified when the first was emitted; want at most %d", atFirst, aheadFiles)
	}
	if emitted != len(inputs) || stepsNow() != len(inputs) {
		t.Errorf("%d files emitted, %d verified; want %d", emitted, stepsNow(), len(inputs))
	}
}
