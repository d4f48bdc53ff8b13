package chart

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/derive/budget"

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

// The axis follows the data: a 10.7k peak under a 350k window (the demo)
// is not a flat line at the bottom, and the window, out of range, is named
// in the legend; a window near the data is drawn, the axis reaching it.
func TestChartScalesToTheData(t *testing.T) {
	result := func(window int64, fills ...int64) *budget.Result {
		return &budget.Result{Path: "r.jsonl", Requests: len(fills),
			Recorded: budget.Recorded{Window: window, PeakFill: slices.Max(fills)},
			Settings: []budget.Outcome{{Window: window, Threshold: window * 9 / 10, PeakFill: slices.Max(fills),
				Trace: &budget.Trace{Fills: fills}}}}
	}
	far := result(350000, 2000, 6400, 10700)
	p, err := build(far)
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Max < 10700 || p.Y.Max > 3*10700 {
		t.Errorf("a 10.7k peak under a 350k window: y axis up to %.0f", p.Y.Max)
	}
	var svg bytes.Buffer
	if err := Write(&svg, far, "svg"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "window and threshold above the chart: peak 3% of the window") {
		t.Errorf("the legend does not say where the window is")
	}

	near := result(128000, 40000, 90000, 110000)
	if p, err = build(near); err != nil {
		t.Fatal(err)
	}
	if p.Y.Max < 128000 {
		t.Errorf("a 110k peak under a 128k window: y axis up to %.0f, below the window", p.Y.Max)
	}
	svg.Reset()
	if err := Write(&svg, near, "svg"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(svg.String(), "above the chart") {
		t.Errorf("a window in range is said to be above the chart")
	}
}

func TestFleetChartScalesToTheData(t *testing.T) {
	f := &budget.Fleet{Sessions: 2, Settings: []budget.FleetOutcome{{Window: 350000, CompactAt: budget.Percent(90).JSON(), Sessions: 2, PeakFillMax: 12000,
		PeakFillHistogram: [][2]int64{{8, 1}, {12, 1}}}}}
	p, err := buildFleet(f)
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Max > 3*12000 {
		t.Errorf("peaks up to 12k under a 350k window: x axis up to %.0f", p.X.Max)
	}
}
