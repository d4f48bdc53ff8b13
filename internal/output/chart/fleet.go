package chart

import (
	"fmt"
	"io"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/rollout-dev/rollout/internal/derive/budget"
)

// WriteFleet renders the distribution of peak fill across the rollouts of
// a fleet, one cumulative curve per simulated window: at x tokens, the
// share of rollouts whose peak fill stayed at or below x. It is drawn from
// the fleet's histograms only, so a merged report draws the same chart.
func WriteFleet(w io.Writer, f *budget.Fleet, format string) error {
	p, err := buildFleet(f)
	if err != nil {
		return err
	}
	return render(w, p, format)
}

func buildFleet(f *budget.Fleet) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Peak context fill across %s", countNoun(f.Sessions, "rollout"))
	p.X.Label.Text = "peak fill (tokens, 1,000-token buckets)"
	p.Y.Label.Text = "rollouts at or below (%)"
	p.X.Tick.Marker = niceTicks{label: short}
	p.Y.Tick.Marker = upTo100{niceTicks{label: func(v int64) string { return strconv.FormatInt(v, 10) }, integer: true}}
	for _, st := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		st.Font.Variant = "Sans"
	}
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	// A cumulative curve leaves the top left corner empty.
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.ThumbnailWidth = 0.4 * vg.Inch
	p.Add(plotter.NewGrid())
	p.X.Min = 0
	// The axis follows the peak fills; a window is marked where it is in
	// range (inRange), and named in the legend otherwise.
	var peak float64
	for _, o := range f.Settings {
		peak = max(peak, float64(o.PeakFillMax))
	}
	right := max(peak, 1)
	for _, o := range f.Settings {
		if inRange(o.Window, peak) {
			right = max(right, float64(o.Window))
		}
	}
	for k, o := range f.Settings {
		if o.Sessions == 0 {
			continue
		}
		pts := plotter.XYs{{X: 0, Y: 0}}
		var seen int64
		for _, kv := range o.PeakFillHistogram {
			x := float64(min(kv[0]*budget.PeakBucket, o.PeakFillMax))
			pts = append(pts, plotter.XY{X: x, Y: pts[len(pts)-1].Y})
			seen += kv[1]
			pts = append(pts, plotter.XY{X: x, Y: 100 * float64(seen) / float64(o.Sessions)})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		col := palette[k%len(palette)]
		l.Color, l.Width = col, vg.Points(1.6)
		p.Add(l)
		win := "recorded windows"
		if o.Window > 0 {
			win = "window " + short(o.Window)
		}
		if o.Window > 0 && !inRange(o.Window, peak) {
			win += fmt.Sprintf(" (above the chart: peak %.0f%% of it)", 100*float64(o.PeakFillMax)/float64(o.Window))
		}
		p.Legend.Add(fmt.Sprintf("%s, threshold %s: p50 %s, p95 %s, %s with overflow", win, o.CompactAt.String(),
			short(o.PeakFillP50), short(o.PeakFillP95), countNoun(o.SessionsOverflowing, "rollout")), l)
		if inRange(o.Window, peak) {
			v, err := plotter.NewLine(plotter.XYs{{X: float64(o.Window), Y: 0}, {X: float64(o.Window), Y: 100}})
			if err != nil {
				return nil, err
			}
			v.Color, v.Width, v.Dashes = col, vg.Points(0.8), []vg.Length{vg.Points(5), vg.Points(3)}
			p.Add(v)
		}
	}
	p.X.Max = right * 1.02
	placeLegend(p, 100) // above 100% of the rollouts
	return p, nil
}

// upTo100 labels a percentage axis no further than 100.
type upTo100 struct{ niceTicks }

func (t upTo100) Ticks(lo, hi float64) []plot.Tick {
	return t.niceTicks.Ticks(lo, min(hi, 100))
}
