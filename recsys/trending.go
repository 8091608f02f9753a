package recsys

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
)

// init registers the time-aware sources, trending and latest, after the
// built-in kinds of models.go.
func init() {
	Register(TrendingModel, Kind{New: func() Model { return &Trending{} }, Candidates: trendingCandidates, PointCost: trendingPoint,
		Service: Service{}.costing(popularTime, popularMemory)})
	Register(LatestModel, Kind{New: func() Model { return &Latest{} }, Service: Service{}.costing(popularTime, popularMemory)})
}

// Names of the time-aware sources.
const (
	TrendingModel = "trending"
	LatestModel   = "latest"
)

// HalfLifeKey is the Params.Extra key of a half-life in days: trending's
// decay, and the decay of past events of the models that take one.
const HalfLifeKey = "half_life"

// TrendingHalfLives are the half-lives in days trending's search tries
// when the grid names none (Grid.Extra["trending"]), from a day to about
// three years by factors of 4, so that the search can extend past either
// end (recsys/eval).
var TrendingHalfLives = []float64{1, 4, 16, 64, 256, 1024}

// DefaultTrendingHalfLife is trending's half-life when a fit names none.
const DefaultTrendingHalfLife = 16

// trendingCandidates is one fit per half-life of g.Extra["trending"], or
// of TrendingHalfLives.
func trendingCandidates(g Grid, _ Caps) []Params {
	settings := g.Extra[TrendingModel]
	if len(settings) == 0 {
		for _, h := range TrendingHalfLives {
			settings = append(settings, map[string]float64{HalfLifeKey: h})
		}
	}
	out := make([]Params, len(settings))
	for n, s := range settings {
		out[n] = Params{Extra: maps.Clone(s)}
	}
	return out
}

// halfLifeOf is p's half-life in days (HalfLifeKey), or def; +Inf is 0,
// no decay, and a value below 0 or NaN is an error.
func halfLifeOf(p Params, def float64) (float64, error) {
	h, ok := p.Extra[HalfLifeKey]
	switch {
	case !ok:
		return def, nil
	case math.IsInf(h, 1):
		return 0, nil
	case !(h >= 0):
		return 0, fmt.Errorf("recsys: half-life %v days, want a number of days ≥ 0 (0: no decay)", h)
	}
	return h, nil
}

// Trending scores an item by its positives weighted by their age,
//
//	trend(i) = Σ_d c(i, d) · exp(−ln2 · (today − d)/h),
//
// c(i, d) the number of the item's positive pairs that became positive on
// day d, today the latest day of the training data and h the half-life in
// days: popularity with exponential decay. With every day equal (an
// untimed matrix) it is popularity. Which of two items trends more does
// not depend on today, only the scale of the scores.
type Trending struct {
	halfLife float64
	today    int32
	scores   []float64
}

func (m *Trending) Name() string { return TrendingModel }

func (m *Trending) Fit(ctx context.Context, x *Matrix, p Params) error {
	h, err := halfLifeOf(p, DefaultTrendingHalfLife)
	if err != nil {
		return err
	}
	m.halfLife, m.today = h, x.LastDay()
	m.scores = make([]float64, x.Items())
	// The weight of each age, once: the per-day counts weigh alike.
	var weight []float64
	for u := range x.Users() {
		days := x.RowDays(u)
		for k, i := range x.Row(u) {
			age := 0
			if days != nil {
				age = int(m.today - days[k])
			}
			for len(weight) <= age {
				weight = append(weight, DecayWeight(float64(len(weight)), h))
			}
			m.scores[i] += weight[age]
		}
	}
	return ctx.Err()
}

func (m *Trending) Score(_ []uint32, scores []float64) {
	clear(scores)
	copy(scores, m.scores)
}

func (m *Trending) ScoreUser(_ int, history []uint32, scores []float64) { m.Score(history, scores) }

// Params reports the half-life in days.
func (m *Trending) Params() map[string]float64 {
	return map[string]float64{HalfLifeKey: m.halfLife}
}

func (m *Trending) MarshalBinary() ([]byte, error) {
	e := newEncoder(m.Name())
	e.Float64(m.halfLife)
	e.Uvarint(uint64(uint32(m.today)))
	e.Uvarint(uint64(len(m.scores)))
	e.Float64s(m.scores)
	return e.Bytes(), nil
}

func (m *Trending) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, m.Name())
	h := d.Finite()
	today := int32(uint32(d.Bounded(1 << 32)))
	scores := d.Finites(d.Count(8))
	if err := d.Finish(); err != nil {
		return err
	}
	if h < 0 || slices.ContainsFunc(scores, func(v float64) bool { return v < 0 }) {
		return errCorrupt
	}
	m.halfLife, m.today, m.scores = h, today, scores
	return nil
}

// Latest scores an item by the day of its earliest positive in the
// training data: 1 + the days from the data's first day to it, so the
// newest items come first and an item with no positive scores 0, last.
// Items first seen on the same day tie, and ties go by popularity, then
// index, as in every ranking (TopN). On an untimed matrix every item with
// a positive ties.
type Latest struct {
	first  int32
	scores []float64
}

func (m *Latest) Name() string { return LatestModel }

func (m *Latest) Fit(ctx context.Context, x *Matrix, _ Params) error {
	earliest := make([]int32, x.Items())
	seen := make([]bool, x.Items())
	m.first = 0
	if x.Timed() && x.NNZ() > 0 {
		m.first = slices.Min(x.days)
	}
	for u := range x.Users() {
		days := x.RowDays(u)
		for k, i := range x.Row(u) {
			d := m.first
			if days != nil {
				d = days[k]
			}
			if !seen[i] || d < earliest[i] {
				earliest[i], seen[i] = d, true
			}
		}
	}
	m.scores = make([]float64, x.Items())
	for i, ok := range seen {
		if ok {
			m.scores[i] = 1 + float64(earliest[i]-m.first)
		}
	}
	return ctx.Err()
}

func (m *Latest) Score(_ []uint32, scores []float64) {
	clear(scores)
	copy(scores, m.scores)
}

func (m *Latest) ScoreUser(_ int, history []uint32, scores []float64) { m.Score(history, scores) }

func (m *Latest) MarshalBinary() ([]byte, error) {
	e := newEncoder(m.Name())
	e.Uvarint(uint64(uint32(m.first)))
	e.Uvarint(uint64(len(m.scores)))
	e.Float64s(m.scores)
	return e.Bytes(), nil
}

func (m *Latest) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, m.Name())
	first := int32(uint32(d.Bounded(1 << 32)))
	scores := d.Finites(d.Count(8))
	if err := d.Finish(); err != nil {
		return err
	}
	if slices.ContainsFunc(scores, func(v float64) bool { return v < 0 }) {
		return errCorrupt
	}
	m.first, m.scores = first, scores
	return nil
}
