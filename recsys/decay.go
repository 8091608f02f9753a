package recsys

import (
	"maps"

	"github.com/recsys-engine/recsys/recsys/blob"
)

// Decayer is implemented by the models that can decay past events: each
// history item weighs by its age instead of 1, exp(−ln2 · age/h) with h
// the model's half-life in days (Params.Extra HalfLifeKey; none by
// default). The score of itemknn, kunn-i, slim and ease is linear in the
// user's row of X, which the weights scale; userknn and kunn-u take the
// weighted row as the live user's vector in their user affinity, KNN(u)
// included, and kunn does both, its c(u) the weighted row's sum. The fit
// stays on the binary X.
type Decayer interface {
	// HalfLife is the half-life in days; 0 means no decay.
	HalfLife() float64
	// ScoreWeighted is Score with history item k counting weights[k].
	ScoreWeighted(history []uint32, weights []float64, scores []float64)
}

// HistoryWeights are the decay weights of a history whose items became
// positive on days: DecayWeight(latest − day, halfLife), the latest day of
// the history weighing 1. A user's ranking depends only on the ages within
// the history, not on which day is today.
func HistoryWeights(days []int32, halfLife float64) []float64 {
	if len(days) == 0 {
		return nil
	}
	latest := days[0]
	for _, d := range days {
		latest = max(latest, d)
	}
	w := make([]float64, len(days))
	for k, d := range days {
		w[k] = DecayWeight(float64(latest-d), halfLife)
	}
	return w
}

// userWeightedScorer is a Decayer whose weighted score depends on which
// training user scores, as UserScorer's: user-based models leave row
// self out of KNN(u).
type userWeightedScorer interface {
	ScoreUserWeighted(self int, history []uint32, weights []float64, scores []float64)
}

// ScoreDecayed scores user self's history as ScoreUser does, except for
// a model with a half-life (Decayer) given the days its history items
// became positive: then each item weighs HistoryWeights. It reports
// whether it decayed; without days or a half-life it is ScoreUser.
func ScoreDecayed(m Model, self int, history []uint32, days []int32, scores []float64) bool {
	if d, ok := m.(Decayer); ok && d.HalfLife() > 0 && len(days) == len(history) && days != nil {
		w := HistoryWeights(days, d.HalfLife())
		if us, ok := m.(userWeightedScorer); ok {
			us.ScoreUserWeighted(self, history, w, scores)
		} else {
			d.ScoreWeighted(history, w, scores)
		}
		return true
	}
	ScoreUser(m, self, history, scores)
	return false
}

// Decays reports whether m scores with a decay of past events.
func Decays(m Model) bool {
	d, ok := m.(Decayer)
	return ok && d.HalfLife() > 0
}

// withSettings is every candidate of cands with every setting of
// settings merged into its Extra; cands when there are none.
func withSettings(cands []Params, settings []map[string]float64) []Params {
	if len(settings) == 0 {
		return cands
	}
	out := make([]Params, 0, len(cands)*len(settings))
	for _, p := range cands {
		for _, s := range settings {
			q := p
			q.Extra = maps.Clone(p.Extra)
			if q.Extra == nil {
				q.Extra = map[string]float64{}
			}
			maps.Copy(q.Extra, s)
			out = append(out, q)
		}
	}
	return out
}

// writeHalfLife appends a model's half-life after its other fields when
// it has one, so that the bytes of a model without decay are those of
// the releases before it.
func writeHalfLife(e *blob.Encoder, h float64) {
	if h > 0 {
		e.Float64(h)
	}
}

// readHalfLife reads what writeHalfLife wrote at the end of a model: 0
// when nothing is left, else a positive finite half-life.
func readHalfLife(d *blob.Decoder) float64 {
	if d.Err() != nil || d.Len() == 0 {
		return 0
	}
	h := d.Finite()
	if d.Err() == nil && !(h > 0) {
		d.Fail(nil)
	}
	return h
}
