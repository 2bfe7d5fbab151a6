package bench

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"math"
	"os"
)

// sweep is the sweep behind the SVG: each mode's median end-to-end time
// (ms) at each number of tool calls, and the floor there.
type sweep struct {
	File   string               `json:"file"`
	Steps  []int                `json:"steps"`
	Runs   int                  `json:"runs"`
	Series map[string][]float64 `json:"series_ms"` // by mode key
	Floor  []float64            `json:"floor_ms"`
}

// plot runs the sweep (at each point every mode runs times, interleaved)
// and writes the SVG to file.
func (b *runner) plot(ctx context.Context, modes []Mode, steps []int, runs int, file string) (*sweep, error) {
	p := &sweep{File: file, Steps: steps, Runs: runs, Series: make(map[string][]float64)}
	for _, n := range steps {
		res, err := b.measure(ctx, modes, n, runs)
		if err != nil {
			return nil, fmt.Errorf("plot, %d tool calls: %w", n, err)
		}
		for _, r := range res {
			p.Series[r.Key] = append(p.Series[r.Key], r.Turn.Median)
		}
		p.Floor = append(p.Floor, res[0].FloorMS)
	}
	if err := os.WriteFile(file, plotSVG(p, modes), 0o644); err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	return p, nil
}

// plotColors are distinguishable on white, one per mode in allModes' order.
var plotColors = []string{"#d62728", "#ff7f0e", "#8c564b", "#1f77b4", "#2ca02c", "#9467bd", "#e377c2", "#17becf"}

// plotSVG draws one line per mode and the floor (dashed) on linear axes:
// tool calls across, seconds up.
func plotSVG(p *sweep, modes []Mode) []byte {
	const w, h, left, right, top, bottom = 960.0, 560.0, 70.0, 330.0, 40.0, 50.0
	pw, ph := w-left-right, h-top-bottom
	maxY := 0.0
	for _, s := range p.Series {
		for _, v := range s {
			maxY = math.Max(maxY, v)
		}
	}
	tick := niceTick(maxY / 1000 / 5) // seconds per gridline
	top1 := math.Max(tick, math.Ceil(maxY/1000/tick)*tick)
	minX, maxX := float64(p.Steps[0]), float64(p.Steps[len(p.Steps)-1])
	if maxX == minX {
		minX, maxX = minX-1, maxX+1
	}
	x := func(n float64) float64 { return left + (n-minX)/(maxX-minX)*pw }
	y := func(v float64) float64 { return top + ph - v/1000/top1*ph }

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%g" y="22" font-size="15">%s</text>`+"\n", left, esc("hearth bench: end-to-end turn time against tool calls"))
	for v := 0.0; v <= top1+tick/2; v += tick {
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>`+"\n", left, y(v*1000), left+pw, y(v*1000))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%gs</text>`+"\n", left-6, y(v*1000)+4, round3(v))
	}
	for _, n := range p.Steps {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#999"/>`+"\n", x(float64(n)), top+ph, x(float64(n)), top+ph+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%d</text>`+"\n", x(float64(n)), top+ph+18, n)
	}
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#333"/>`+"\n", left, top, pw, ph)
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">tool calls per turn</text>`+"\n", left+pw/2, h-12)
	line := func(vals []float64, color, dash string) {
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="`, color, dash)
		for i, v := range vals {
			fmt.Fprintf(&b, "%.1f,%.1f ", x(float64(p.Steps[i])), y(v))
		}
		b.WriteString("\"/>\n")
		for i, v := range vals {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x(float64(p.Steps[i])), y(v), color)
		}
	}
	legend := func(i int, color, dash, name string) {
		ly := top + 10 + float64(i)*20
		fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="2"%s/>`+"\n", left+pw+14, ly, left+pw+40, ly, color, dash)
		fmt.Fprintf(&b, `<text x="%g" y="%g">%s</text>`+"\n", left+pw+46, ly+4, esc(name))
	}
	for i, m := range modes {
		color := plotColors[i%len(plotColors)]
		line(p.Series[m.key], color, "")
		legend(i, color, "", m.name)
	}
	line(p.Floor, "#000", ` stroke-dasharray="6 4"`)
	legend(len(modes), "#000", ` stroke-dasharray="6 4"`, "the floor")
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// niceTick rounds a gridline step up to 1, 2 or 5 times a power of ten.
func niceTick(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
