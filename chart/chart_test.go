package chart

import (
	"slices"
	"testing"

	"gonum.org/v1/plot/plotter"
)

func TestShort(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 57600: "57.6k", 128000: "128k", 258400: "258.4k",
		1000000: "1M", 1500000: "1.5M", 1234567: "1234567", 100050: "100050"} {
		if got := short(in); got != want {
			t.Errorf("short(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	var got []float64
	for _, tk := range (niceTicks{label: short}).Ticks(0, 330000) {
		got = append(got, tk.Value)
	}
	// span 330,000 / 10 = 33,000 -> 10^4 x {1, 2, 2.5, 5}: 5 gives 6.6 labels.
	if want := []float64{0, 50000, 100000, 150000, 200000, 250000, 300000}; !slices.Equal(got, want) {
		t.Errorf("ticks %v, want %v", got, want)
	}
	got = got[:0]
	for _, tk := range (niceTicks{label: short, integer: true}).Ticks(0, 3) {
		got = append(got, tk.Value)
	}
	if want := []float64{0, 1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("integer ticks %v, want %v", got, want)
	}
}

// reduce bounds the vertices and keeps every extreme: the sawtooth's
// peaks and drops.
func TestReduce(t *testing.T) {
	var pts plotter.XYs
	for i := 0; i < 100000; i++ {
		y := float64(i % 997) // a sawtooth
		if i == 54321 {
			y = 5000 // one spike
		}
		pts = append(pts, plotter.XY{X: float64(i), Y: y})
	}
	out := reduce(pts)
	if len(out) > maxPoints+2 || len(out) < maxPoints/2 {
		t.Fatalf("%d points", len(out))
	}
	hasSpike, lowest := false, 1e9
	for i, p := range out {
		if p.Y == 5000 && p.X == 54321 {
			hasSpike = true
		}
		lowest = min(lowest, p.Y)
		if i > 0 && p.X < out[i-1].X {
			t.Fatalf("x goes back at %d", i)
		}
	}
	if !hasSpike || lowest != 0 {
		t.Errorf("spike kept %v, lowest %v", hasSpike, lowest)
	}
	small := pts[:10]
	if got := reduce(small); len(got) != 10 {
		t.Errorf("short series changed: %d points", len(got))
	}
}
