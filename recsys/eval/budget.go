package eval

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/recsys-engine/recsys/recsys"
)

// PointTime is one point of a search with its cost: the fit and
// validation of one grid point (or, for a kind with its own search,
// one call of that search).
type PointTime struct {
	// Params names the point ("factors=400 alpha0=0.1 lambda=0.01"); for
	// a kind with its own search "grid" for the first search, then the
	// value of each extension step; a blend's base's points carry the
	// base's name ("ials.factors=400 …").
	Params string
	// Predicted is the predicted seconds (0: the kind has no cost model,
	// or the first search of a kind with its own), Measured the seconds
	// the fit and its validation took (0 when skipped).
	Predicted, Measured float64
	// Skipped, when not empty, is why the point was not fitted.
	Skipped string
}

// searchCost is the time budget of one search (Tuning.Deadline): it
// predicts each point by the kind's formula (recsys.Kind.PointCost,
// GridCost) times a rate, 1 until points are fitted and then the ratio
// of their measured to their predicted seconds, and keeps every point's
// times and the reasons of those skipped.
type searchCost struct {
	kind     recsys.Kind
	shape    recsys.Shape
	deadline time.Time
	now      func() time.Time
	// measured and formula sum the fitted points' measured seconds and
	// their formulas' (the rate's ratio); fitted counts them. first holds
	// the first point's two when it was fitted alone.
	measured, formula float64
	first             [2]float64
	fitted            int
	points            []PointTime
	skipped           []string
}

// newSearchCost is the budget of a search of kind under t on train,
// validated by the users with items in val, its neighbour lists cached
// up to kmax.
func newSearchCost(kind recsys.Kind, t Tuning, train *recsys.Matrix, val [][]uint32, kmax int) *searchCost {
	n := 0
	for _, v := range val {
		if len(v) > 0 {
			n++
		}
	}
	active := 0
	for i := range train.Items() {
		if train.ItemCount(i) > 0 {
			active++
		}
	}
	return &searchCost{kind: kind, deadline: t.Deadline, now: t.clock(),
		shape: recsys.Shape{Users: train.Users(), Items: train.Items(), Positives: train.NNZ(), ValidationUsers: max(1, n), KMax: max(1, kmax), ActiveItems: active}}
}

// clock is t's clock: time.Now unless a test set one.
func (t Tuning) clock() func() time.Time {
	if t.now != nil {
		return t.now
	}
	return time.Now
}

// rate is the correction of the formulas by the points measured so far:
// Σ measured / Σ predicted by the formulas. A search's first fit also
// builds what the search shares (the cache's neighbour lists, built at
// the first fit that reads them) and warms up, so a first point fitted
// alone counts only until another is measured; a FitGrid batch's shared
// work is in its formula (GridCost).
func (c *searchCost) rate() float64 {
	m, f := c.measured, c.formula
	if c.fitted > 1 && c.first != [2]float64{} {
		m, f = m-c.first[0], f-c.first[1]
	}
	if f > 0 && m > 0 {
		return m / f
	}
	return 1
}

// formulaOf is the formulas' seconds of fitting cs: one FitGrid batch
// when batch is set (GridCost once, PointCost each), else one by one.
func (c *searchCost) formulaOf(cs []recsys.Params, batch bool) float64 {
	if c.kind.PointCost == nil {
		return 0
	}
	sum := 0.0
	for _, p := range cs {
		sum += c.kind.PointCost(c.shape, p)
	}
	if batch && c.kind.GridCost != nil && len(cs) > 0 {
		sum += c.kind.GridCost(c.shape, cs)
	}
	return sum
}

// predict is the predicted seconds of cs: rate × formulaOf.
func (c *searchCost) predict(cs []recsys.Params, batch bool) float64 {
	return c.rate() * c.formulaOf(cs, batch)
}

// over is why work named what, predicted to take seconds, is not
// started: it would end past the deadline ("factors=400: predicted 812 s,
// 95 s left of the budget"); "" when it fits, and when there is no
// deadline or no prediction. The callers fit the first point of a search
// whatever it says, so that every search has a choice.
func (c *searchCost) over(what string, seconds float64) string {
	if c.deadline.IsZero() || seconds <= 0 {
		return ""
	}
	left := c.deadline.Sub(c.now()).Seconds()
	if seconds <= left {
		return ""
	}
	return fmt.Sprintf("%s: predicted %s, %s left of the budget", what, formatSeconds(seconds), formatSeconds(max(0, left)))
}

// skip records a point not fitted for why.
func (c *searchCost) skip(label string, predicted float64, why string) {
	c.points = append(c.points, PointTime{Params: label, Predicted: predicted, Skipped: why})
	c.skipped = append(c.skipped, why)
}

// done records a fitted point: predicted and measured seconds, and the
// formula's seconds the rate compares them with; alone is set for a
// point fitted by itself (not in a FitGrid batch).
func (c *searchCost) done(label string, predicted, measured, formula float64, alone bool) {
	c.points = append(c.points, PointTime{Params: label, Predicted: predicted, Measured: measured})
	if c.fitted == 0 && alone {
		c.first = [2]float64{measured, formula}
	}
	c.measured += measured
	c.formula += formula
	c.fitted++
}

// doneOwn records a search of a kind with its own search (or a step of
// it): its measured seconds, of which the rate compares own, the search's
// own work, with its formula (tuneSearch's units).
func (c *searchCost) doneOwn(label string, predicted, measured, own, formula float64) {
	c.points = append(c.points, PointTime{Params: label, Predicted: predicted, Measured: measured})
	c.measured += own
	c.formula += formula
	c.fitted++
}

// trim is the part of a FitGrid batch cs that fits the time left: the
// points in order, each kept when the batch of those kept and it is
// predicted within the budget, the others recorded as skipped. The first
// point of a search is always kept.
func (c *searchCost) trim(cs []recsys.Params, label func(recsys.Params) string) []recsys.Params {
	if c.deadline.IsZero() || c.kind.PointCost == nil {
		return cs
	}
	var keep []recsys.Params
	for _, p := range cs {
		trial := append(slices.Clip(keep), p)
		if c.fitted > 0 || len(keep) > 0 {
			pred := c.predict(trial, true)
			what := label(p)
			if len(keep) > 0 {
				what += fmt.Sprintf(" (fitted at once with %d more)", len(keep))
			}
			if why := c.over(what, pred); why != "" {
				c.skip(label(p), c.rate()*c.kind.PointCost(c.shape, p), why)
				continue
			}
		}
		keep = trial
	}
	return keep
}

// formatSeconds writes a predicted or measured time: "812 s", "2.4 s",
// "0.031 s".
func formatSeconds(s float64) string {
	switch {
	case s >= 100:
		return strconv.FormatFloat(s, 'f', 0, 64) + " s"
	case s >= 1:
		return strconv.FormatFloat(s, 'f', 1, 64) + " s"
	}
	return strconv.FormatFloat(s, 'g', 2, 64) + " s"
}

// pointLabel names the point p of a search whose main parameter is
// mainName: "k=100 l1=1 l2=10", "factors=400 alpha0=0.1 lambda=0.01".
func pointLabel(p recsys.Params, mainName string) string {
	var parts []string
	if p.K > 0 {
		parts = append(parts, mainName+"="+strconv.Itoa(p.K))
	}
	if p.L1 != 0 || p.L2 != 0 {
		parts = append(parts, "l1="+formatFloat(p.L1), "l2="+formatFloat(p.L2))
	}
	for _, k := range slices.Sorted(maps.Keys(p.Extra)) {
		parts = append(parts, k+"="+formatFloat(p.Extra[k]))
	}
	if o := febrOptions(p); o != nil {
		parts = append(parts, "lambda="+formatFloat(o.Lambda))
	}
	if len(parts) == 0 {
		return "defaults"
	}
	return strings.Join(parts, " ")
}

// formatPoints renders a search's points for the report, compactly:
// "k=10 0.21/0.18 s, k=20 0.35/skipped", predicted/measured, "-" for a
// time not predicted.
func formatPoints(points []PointTime) string {
	out := make([]string, len(points))
	for k, p := range points {
		pred := "-"
		if p.Predicted > 0 {
			pred = strconv.FormatFloat(p.Predicted, 'g', 3, 64)
		}
		meas := "skipped"
		if p.Skipped == "" {
			meas = strconv.FormatFloat(p.Measured, 'g', 3, 64) + " s"
		}
		out[k] = p.Params + " " + pred + "/" + meas
	}
	return strings.Join(out, ", ")
}
