package chart

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/derive/budget"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
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
	if !strings.Contains(svg.String(), "window and threshold above the chart: peak 3.1% of the window") {
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

// A peak far below the window is not "0%" (issue 37: 1,030 of 258,400).
func TestPercent(t *testing.T) {
	for _, tt := range []struct {
		part, whole float64
		want        string
	}{{1030, 258400, "0.4%"}, {10, 258400, "<0.1%"}, {0, 100, "0.0%"}, {10700, 350000, "3.1%"}, {99, 1000, "9.9%"}, {996, 10000, "10%"}, {87, 100, "87%"}} {
		if got := percent(tt.part, tt.whole); got != tt.want {
			t.Errorf("percent(%v, %v) = %q, want %q", tt.part, tt.whole, got, tt.want)
		}
	}
}

// The legend's geometry: on its box, inset from the data area's top (where
// the top grid line runs), its entries apart from each other, and above the
// highest data point.
func TestLegendPlacement(t *testing.T) {
	fills := []int64{20000, 35000, 60000, 75000, 12000, 40000, 62000, 92000}
	r := &budget.Result{Path: "r.jsonl", Requests: len(fills), RecordedFills: fills,
		Recorded: budget.Recorded{Window: 100000, PeakFill: 92000, Compactions: 1, CompactionRequests: []int{5}}}
	for _, w := range []int64{64000, 100000, 200000} {
		r.Settings = append(r.Settings, budget.Outcome{Window: w, Threshold: w * 9 / 10, PostCompactTokens: 12000,
			Trace: &budget.Trace{Fills: fills}})
	}
	p, box, err := buildWithLegend(r)
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder.Canvas
	c := draw.NewCanvas(&rec, Width, Height)
	p.Draw(c)
	data := p.DataCanvas(c)
	rect := box.Rect(data)
	if top := data.Max.Y - rect.Max.Y; top < legendInset-0.01 {
		t.Errorf("the legend's box is %.1fpt below the data area's top, want %dpt", top, legendInset)
	}
	if peak := data.Y(p.Y.Norm(92000)); peak >= rect.Min.Y {
		t.Errorf("the highest data point (y %.1f) runs under the legend (bottom %.1f)", peak, rect.Min.Y)
	}
	// The entries: the texts in the data area but the title.
	var ys []vg.Length
	for _, a := range rec.Actions {
		if a, ok := a.(*recorder.FillString); ok && a.Point.X > data.Min.X && a.Point.Y > data.Min.Y && a.String != p.Title.Text {
			ys = append(ys, a.Point.Y)
		}
	}
	ext := box.l.TextStyle.FontExtents()
	if want := 2 + len(r.Settings); len(ys) < want {
		t.Fatalf("found %d legend entries, want %d", len(ys), want)
	}
	for i, y := range ys {
		if y+ext.Ascent > rect.Max.Y || y-ext.Descent < rect.Min.Y {
			t.Errorf("entry %d (baseline %.1f) is outside its box %.1f..%.1f", i, y, rect.Min.Y, rect.Max.Y)
		}
		if i > 0 {
			// The gap between one entry's descent and the next's ascent.
			if gap := ys[i-1] - ext.Descent - (y + ext.Ascent); gap < legendGap-0.5 {
				t.Errorf("entries %d and %d are %.1fpt apart, want at least %dpt", i-1, i, gap, legendGap)
			}
		}
	}
}
