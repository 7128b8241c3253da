package bench

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

var (
	baseColor = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	newColor  = color.RGBA{R: 214, G: 39, B: 40, A: 255}
)

func canvas(path string, w, h vg.Length) (vg.CanvasWriterTo, error) {
	switch filepath.Ext(path) {
	case ".svg":
		return vgsvg.New(w, h), nil
	case ".png":
		return vgimg.PngCanvas{Canvas: vgimg.New(w, h)}, nil
	}
	return nil, fmt.Errorf("plot %s: use a .svg or .png name", path)
}

func save(path string, c vg.CanvasWriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func cdf(v []float64) plotter.XYs {
	a := append([]float64(nil), v...)
	sort.Float64s(a)
	xy := make(plotter.XYs, len(a))
	for i, x := range a {
		xy[i] = plotter.XY{X: x, Y: float64(i+1) / float64(len(a))}
	}
	return xy
}

// PlotCompare draws the CDF and the histogram of a metric for base and new
// side by side: a shift shows as parallel CDFs, bunching as steps.
func PlotCompare(path, metric string, base, new []float64, baseName, newName string) error {
	c, err := canvas(path, 28*vg.Centimeter, 11*vg.Centimeter)
	if err != nil {
		return err
	}
	pc := plot.New()
	pc.Title.Text = "CDF of " + metric
	pc.X.Label.Text = metric
	pc.Y.Label.Text = "fraction of partitions"
	ph := plot.New()
	ph.Title.Text = "histogram of " + metric
	ph.X.Label.Text = metric
	ph.Y.Label.Text = "partitions"
	lo, hi := bounds(append(append([]float64{}, base...), new...))
	bins := 20
	for _, s := range []struct {
		v    []float64
		name string
		col  color.RGBA
	}{{base, baseName, baseColor}, {new, newName, newColor}} {
		l, err := plotter.NewLine(cdf(s.v))
		if err != nil {
			return err
		}
		l.Color, l.Width = s.col, vg.Points(2)
		pc.Add(l)
		pc.Legend.Add(fmt.Sprintf("%s (n=%d)", s.name, len(s.v)), l)
		h, err := hist(s.v, lo, hi, bins)
		if err != nil {
			return err
		}
		// Translucent fill (non-premultiplied) so overlapping bars show both.
		h.FillColor, h.LineStyle.Color = color.NRGBA{R: s.col.R, G: s.col.G, B: s.col.B, A: 90}, s.col
		ph.Add(h)
		ph.Legend.Add(s.name, h)
	}
	pc.Legend.Top, pc.Legend.Left = false, false
	pc.Legend.YOffs = vg.Centimeter * 1.5
	ph.Legend.Top = true
	pc.Add(plotter.NewGrid())
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Centimeter, PadY: vg.Millimeter * 4, PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3, PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3}
	plots := [][]*plot.Plot{{pc, ph}}
	cv := plot.Align(plots, tiles, dc)
	pc.Draw(cv[0][0])
	ph.Draw(cv[0][1])
	return save(path, c)
}

func bounds(v []float64) (float64, float64) {
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	if hi == lo {
		hi = lo + 1
	}
	return lo, hi
}

// hist bins v over a common range, so two histograms share their bars.
func hist(v []float64, lo, hi float64, n int) (*plotter.Histogram, error) {
	w := (hi - lo) / float64(n)
	bins := make([]plotter.HistogramBin, n)
	for i := range bins {
		bins[i].Min, bins[i].Max = lo+float64(i)*w, lo+float64(i+1)*w
	}
	for _, x := range v {
		i := min(n-1, int((x-lo)/w))
		bins[i].Weight++
	}
	return &plotter.Histogram{Bins: bins, Width: w, LineStyle: plotter.DefaultLineStyle}, nil
}

// PlotTimeline draws which partition held which device when, one row per
// device: gaps are starvation, stacks of short bars bunching.
func PlotTimeline(path string, r *Run) error {
	c, err := canvas(path, 28*vg.Centimeter, 9*vg.Centimeter)
	if err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("device slots: %d sectors x %d partitions, %s, concurrency %d", r.Config.Count, r.Config.Partitions, r.Config.Profile, r.Config.Concurrency)
	p.X.Label.Text = "seconds since submit"
	rows := map[string]int{}
	var names []string
	for _, s := range r.Partitions {
		k := s.Host + "/" + s.Device
		if _, ok := rows[k]; !ok {
			rows[k] = len(rows)
			names = append(names, k)
		}
	}
	sectorIdx := map[uint64]int{}
	for _, s := range r.Sectors {
		sectorIdx[s.SectorID] = len(sectorIdx)
	}
	palette := []color.RGBA{baseColor, newColor, {44, 160, 44, 255}, {255, 127, 14, 255}, {148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255}}
	for _, s := range r.Partitions {
		if s.DeviceEndMS <= s.DeviceStartMS {
			continue
		}
		y := float64(rows[s.Host+"/"+s.Device])
		l, err := plotter.NewLine(plotter.XYs{{X: float64(s.DeviceStartMS) / 1000, Y: y}, {X: float64(s.DeviceEndMS) / 1000, Y: y}})
		if err != nil {
			return err
		}
		l.Color = palette[sectorIdx[s.SectorID]%len(palette)]
		l.Width = vg.Points(14)
		p.Add(l)
	}
	ticks := make([]plot.Tick, len(names))
	for i, n := range names {
		ticks[i] = plot.Tick{Value: float64(i), Label: n}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = -0.7, float64(len(names))-0.3
	p.X.Min = 0
	p.Add(plotter.NewGrid())
	p.Draw(draw.New(c))
	return save(path, c)
}
