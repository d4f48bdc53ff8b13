// Package chart draws simulate-budget results: the context fill per request
// under each simulated window, with the window and threshold as lines and
// compactions and overflows as marks. It is one of the outputs
// (internal/output), after the budget model it draws, and a package of its
// own: the budget library stays free of the plotting library and its fonts.
package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/rollout-dev/rollout/internal/derive/budget"
)

// Size of the chart; PNG renders at DPI.
const (
	Width  = 9 * vg.Inch
	Height = 5 * vg.Inch
	DPI    = 144
)

// maxPoints bounds the vertices of one series: longer traces are reduced
// to the minimum and maximum of each bucket of requests, which keeps every
// compaction drop and peak visible and the file size independent of the
// rollout's length.
const maxPoints = 4000

// palette is Okabe-Ito (colour-blind safe), one colour per window.
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // purple
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky
}

// Write renders r (simulated with Settings.Trace) as "svg" or "png". SVG
// output is byte-identical for the same result; fonts are not embedded.
func Write(w io.Writer, r *budget.Result, format string) error {
	p, err := build(r)
	if err != nil {
		return err
	}
	return render(w, p, format)
}

// render draws a plot as "svg" or "png" at the charts' size.
func render(w io.Writer, p *plot.Plot, format string) error {
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.NewWith(vgsvg.UseWH(Width, Height))
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(Width, Height), vgimg.UseDPI(DPI))}
	default:
		return fmt.Errorf("unknown chart format %q", format)
	}
	p.Draw(draw.New(c))
	_, err := c.WriteTo(w)
	return err
}

func build(r *budget.Result) (*plot.Plot, error) {
	p, _, err := buildWithLegend(r)
	return p, err
}

// buildWithLegend is build, and the legend's box (for its geometry test).
func buildWithLegend(r *budget.Result) (*plot.Plot, legendBox, error) {
	p := plot.New()
	p.Title.Text = "Context fill per request: " + filepath.Base(r.Path)
	p.X.Label.Text = "request (re-emitted and rolled-back token counts excluded)"
	p.Y.Label.Text = "context fill (tokens)"
	p.Y.Tick.Marker = niceTicks{label: short}
	p.X.Tick.Marker = niceTicks{label: func(v int64) string { return strconv.FormatInt(v, 10) }, integer: true}
	for _, st := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		st.Font.Variant = "Sans"
	}
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.ThumbnailWidth = 0.4 * vg.Inch
	p.Add(plotter.NewGrid())

	n := float64(max(r.Requests, 1))
	// The axis follows the data: the highest fill, recorded or simulated.
	// A window or threshold is drawn (and the axis reaches it) only when
	// it is in range, not far above the data; otherwise the legend says
	// where it is.
	peak := float64(r.Recorded.PeakFill)
	for _, o := range r.Settings {
		if o.Trace != nil {
			for _, f := range o.Trace.Fills {
				peak = max(peak, float64(f))
			}
		}
	}
	top := max(peak, 1)
	for _, o := range r.Settings {
		for _, v := range []int64{o.Window, o.Threshold} {
			if inRange(v, peak) {
				top = max(top, float64(v))
			}
		}
	}
	p.X.Min, p.X.Max = 0, n+1

	if len(r.RecordedFills) > 0 {
		pts := make(plotter.XYs, 0, len(r.RecordedFills)+2*len(r.Recorded.CompactionRequests))
		ci := 0
		for i, f := range r.RecordedFills {
			req := i + 1
			for ; ci < len(r.Recorded.CompactionRequests) && r.Recorded.CompactionRequests[ci] <= req; ci++ {
				if r.Recorded.CompactionRequests[ci] == req && i > 0 {
					// The drop of a recorded compaction, as in the simulated series.
					x := float64(req) - 0.5
					pts = append(pts, plotter.XY{X: x, Y: float64(r.RecordedFills[i-1])}, plotter.XY{X: x, Y: float64(f)})
				}
			}
			pts = append(pts, plotter.XY{X: float64(req), Y: float64(f)})
		}
		l, err := plotter.NewLine(reduce(pts))
		if err != nil {
			return nil, legendBox{}, err
		}
		// Wide and light, under the simulated series: where the model
		// matches the recording, the simulated line runs inside it.
		l.Color, l.Width = color.Gray{0xcc}, vg.Points(5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("recorded (window %s, %s)", short(r.Recorded.Window), countNoun(r.Recorded.Compactions, "compaction")), l)
	}

	var comps, overs plotter.XYs
	for k, o := range r.Settings {
		col := palette[k%len(palette)]
		for _, h := range []struct {
			y    int64
			dash []vg.Length
		}{{o.Window, nil}, {o.Threshold, []vg.Length{vg.Points(5), vg.Points(3)}}} {
			if !inRange(h.y, peak) {
				continue
			}
			l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: float64(h.y)}, {X: n + 1, Y: float64(h.y)}})
			if err != nil {
				return nil, legendBox{}, err
			}
			l.Color, l.Width, l.Dashes = col, vg.Points(0.8), h.dash
			p.Add(l)
		}
		if o.Trace == nil {
			continue
		}
		pts, c, ov := series(o)
		comps, overs = append(comps, c...), append(overs, ov...)
		l, err := plotter.NewLine(reduce(pts))
		if err != nil {
			return nil, legendBox{}, err
		}
		l.Color, l.Width = col, vg.Points(1.6)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("window %s, threshold %s: %s, %s%s", short(o.Window), short(o.Threshold),
			countNoun(o.Compactions, "compaction"), countNoun(o.Overflows, "overflow"), aboveNote(o.Window, o.Threshold, peak)), l)
		for _, m := range []struct {
			pts   plotter.XYs
			glyph draw.GlyphDrawer
		}{{c, draw.TriangleGlyph{}}, {ov, draw.CrossGlyph{}}} {
			if len(m.pts) == 0 {
				continue
			}
			s, err := plotter.NewScatter(m.pts)
			if err != nil {
				return nil, legendBox{}, err
			}
			s.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3.5), Shape: m.glyph}
			p.Add(s)
		}
	}
	// Legend keys for the line styles and marks, in black.
	p.Legend.Add("window (solid), threshold (dashed)", &plotter.Line{LineStyle: draw.LineStyle{
		Color: color.Black, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}})
	if len(comps) > 0 {
		p.Legend.Add("compaction", glyphThumb{draw.TriangleGlyph{}})
	}
	if len(overs) > 0 {
		p.Legend.Add("overflow (the request does not fit)", glyphThumb{draw.CrossGlyph{}})
	}
	return p, placeLegend(p, top), nil
}

// The legend sits in the data area's top left corner, legendInset in
// from its edges, on a white box legendPad wider than its entries, with
// legendGap between entries: no grid line or series runs through it.
const (
	legendInset = 8   // pt
	legendPad   = 4   // pt
	legendGap   = 3   // pt
	legendClear = 6   // pt between the box and the highest data point
	plotArea    = 290 // pt: the data area's height at the chart's size (Height, title, x axis)
)

// placeLegend moves the legend into a box drawn over the plot (a plotter,
// drawn after the grid and the series) and sets the y axis so that the
// data stays below the box.
func placeLegend(p *plot.Plot, top float64) legendBox {
	l := p.Legend
	p.Legend = plot.NewLegend() // drawn by the box, not by the plot
	// plot.Legend spaces entries by the text's height; the font's ascent
	// and descent reach beyond it, so entries would touch.
	ext := l.TextStyle.FontExtents()
	box := legendBox{l}
	box.l.Padding = legendGap + max(0, ext.Ascent+ext.Descent-box.entryHeight())
	h := float64(box.height())
	p.Y.Min, p.Y.Max = 0, top/(1-min(0.6, (h+legendInset+legendClear)/plotArea))
	p.Add(box)
	return box
}

// legendBox draws a legend on a white box in the data area.
type legendBox struct{ l plot.Legend }

// height is the box's height: the entries, the gaps between them and the
// padding.
func (b legendBox) height() vg.Length {
	n := vg.Length(b.entries())
	return n*b.entryHeight() + (n-1)*b.l.Padding + 2*legendPad
}

func (b legendBox) entryHeight() vg.Length { return b.l.TextStyle.Rectangle("Xg").Max.Y }

// entries counts the legend's entries: plot.Legend keeps them unexported,
// so they are counted by drawing it on a recorder.
func (b legendBox) entries() int {
	var rec recorder.Canvas
	l := b.l
	l.Draw(draw.NewCanvas(&rec, Width, Height))
	n := 0
	for _, a := range rec.Actions {
		if _, ok := a.(*recorder.FillString); ok {
			n++
		}
	}
	return n
}

// Rect is the box in c, the data area.
func (b legendBox) Rect(c draw.Canvas) vg.Rectangle {
	width := vg.Length(0)
	var rec recorder.Canvas
	l := b.l
	l.Draw(draw.NewCanvas(&rec, Width, Height))
	for _, a := range rec.Actions {
		if fs, ok := a.(*recorder.FillString); ok {
			width = max(width, b.l.TextStyle.Rectangle(fs.String).Max.X)
		}
	}
	width += b.l.ThumbnailWidth + b.l.TextStyle.Rectangle(" ").Max.X
	minX, maxY := c.Min.X+legendInset, c.Max.Y-legendInset
	return vg.Rectangle{Min: vg.Point{X: minX, Y: maxY - b.height()}, Max: vg.Point{X: minX + width + 2*legendPad, Y: maxY}}
}

func (b legendBox) Plot(c draw.Canvas, _ *plot.Plot) {
	r := b.Rect(c)
	c.SetColor(color.White)
	c.Fill(r.Path())
	c.SetLineStyle(draw.LineStyle{Color: color.Gray{0xbb}, Width: vg.Points(0.5)})
	c.Stroke(r.Path())
	// plot.Legend draws its first entry at the canvas's top, less the
	// font's descent; its entries are spaced by Padding.
	inner := c
	inner.Min.X = r.Min.X + legendPad
	inner.Max.Y = r.Max.Y - legendPad + b.l.TextStyle.FontExtents().Descent
	b.l.Draw(inner)
}

// inRangeFactor: a window or threshold up to this many times the highest
// fill is in range, drawn with the axis reaching it; above it, the fill
// would be a flat line at the bottom of the chart (a 10.7k peak under a
// 350k window), so it is named in the legend instead.
const inRangeFactor = 2

func inRange(v int64, peak float64) bool { return v > 0 && float64(v) <= inRangeFactor*max(peak, 1) }

// aboveNote is the legend's note for a window and threshold out of range.
func aboveNote(window, threshold int64, peak float64) string {
	switch {
	case window <= 0 || inRange(window, peak) && inRange(threshold, peak):
		return ""
	case !inRange(threshold, peak):
		return fmt.Sprintf(" (window and threshold above the chart: peak %s of the window)", percent(peak, float64(window)))
	}
	return fmt.Sprintf(" (window above the chart: peak %s of it)", percent(peak, float64(window)))
}

// percent writes part of whole as a percentage a reader can tell from 0:
// one decimal below 10% ("0.4%"), "<0.1%" below that, whole numbers above.
func percent(part, whole float64) string {
	p := 100 * part / whole
	switch {
	case p > 0 && p < 0.05:
		return "<0.1%"
	case p < 9.95:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}

// series turns one trace into a sawtooth: each compaction is a vertical
// drop halfway between the request that reached the threshold and the
// next one, each overflow a spike above the window falling back to the
// post-compaction fill.
func series(o budget.Outcome) (pts, comps, overs plotter.XYs) {
	t := o.Trace
	pts = make(plotter.XYs, 0, len(t.Fills)+2*len(o.CompactionRequests)+len(o.OverflowRequests))
	ci, oi := 0, 0
	for i, f := range t.Fills {
		req := i + 1
		if ci < len(o.CompactionRequests) && o.CompactionRequests[ci] == req {
			x := float64(req) - 0.5
			from := float64(t.CompactionFrom[ci])
			pts = append(pts, plotter.XY{X: x, Y: from}, plotter.XY{X: x, Y: float64(o.PostCompactTokens)})
			comps = append(comps, plotter.XY{X: x, Y: from})
			ci++
		}
		pts = append(pts, plotter.XY{X: float64(req), Y: float64(f)})
		if oi < len(o.OverflowRequests) && o.OverflowRequests[oi] == req {
			overs = append(overs, plotter.XY{X: float64(req), Y: float64(f)})
			pts = append(pts, plotter.XY{X: float64(req), Y: float64(o.PostCompactTokens)})
			oi++
		}
	}
	return pts, comps, overs
}

// reduce keeps at most about maxPoints vertices: per bucket of x, the
// lowest and the highest point, in their order.
func reduce(pts plotter.XYs) plotter.XYs {
	if len(pts) <= maxPoints {
		return pts
	}
	buckets := maxPoints / 2
	lo, hi := pts[0].X, pts[len(pts)-1].X
	width := (hi - lo) / float64(buckets)
	out := make(plotter.XYs, 0, maxPoints+2)
	for i := 0; i < len(pts); {
		end := lo + width*(float64(int((pts[i].X-lo)/width))+1)
		mn, mx := i, i
		j := i
		for ; j < len(pts) && (pts[j].X < end || j == i); j++ {
			if pts[j].Y < pts[mn].Y {
				mn = j
			}
			if pts[j].Y > pts[mx].Y {
				mx = j
			}
		}
		a, b := min(mn, mx), max(mn, mx)
		out = append(out, pts[a])
		if b != a {
			out = append(out, pts[b])
		}
		i = j
	}
	return out
}

// glyphThumb is the legend thumbnail of a mark.
type glyphThumb struct{ shape draw.GlyphDrawer }

func (g glyphThumb) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3.5), Shape: g.shape}, c.Center())
}

// niceTicks labels an axis every 1, 2, 2.5 or 5 times a power of ten,
// with at most 10 labels.
type niceTicks struct {
	label   func(int64) string
	integer bool // no step below 1
}

func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	if span <= 0 {
		return nil
	}
	step := math.Pow10(int(math.Floor(math.Log10(span / 8))))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if span/(step*m) <= 10 {
			step *= m
			break
		}
	}
	if t.integer {
		step = max(1, math.Round(step))
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: t.label(int64(math.Round(v)))})
	}
	return ticks
}

// short writes 128000 as 128k and 1500000 as 1.5M.
func short(v int64) string {
	switch {
	case v >= 1_000_000 && v%10_000 == 0:
		return strconv.FormatFloat(float64(v)/1e6, 'f', -1, 64) + "M"
	case v >= 1000 && v%100 == 0:
		return strconv.FormatFloat(float64(v)/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatInt(v, 10)
}

func countNoun(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
