package febr

import (
	"context"
	"slices"
	"time"

	"github.com/recsys-engine/recsys/recsys"
)

// Model is a FEBR model, Feature-Extraction-Based Ranking (§4.5–4.6): a
// linear predictor f_θ(u, i) = θ·z(φ(u, i)) over the z-scored aggregates of
// the item and/or user affinity vectors of (u, i) and the missing-feature
// indicators, with θ learnt by OPT-ADG (Algorithm 4.2, opt.go).
//
// Scoring extracts the features from the live history; items with missing
// features on every side share the score θ·z(missing), so they come after
// or before the candidates as one block ordered by popularity (the
// tie-break of every ranking).
type Model struct {
	v      variant
	k      int
	lambda float64
	l1, l2 float64 // the fsSLIM constants of the SLIM affinity
	theta  []float64
	ext    *extractor
	x      *recsys.Matrix // the training matrix of the user side; nil for FEBRi
	sMiss  float64
	info   Info
	// valRanks are θ's ranks of the validation items early stopping
	// ranked (optResult.ranks), for the search's Choice; not encoded.
	valRanks [][]int
}

// Info describes a FEBR fit.
type Info struct {
	// Iterations is the OPT-ADG iteration count of θ; ValidationADG its
	// validation ADG (0 without validation items); Evaluations the number
	// of validation evaluations made.
	Iterations    int
	ValidationADG float64
	Evaluations   int
	// Updates is how many of those iterations found a violator and
	// stepped on the loss.
	Updates int
	// Candidates is the number of (u, i) training pairs with non-missing
	// features (estimated from the users of the z-score statistics when
	// streaming); MemoBytes the size of the feature memo, or what it would
	// take (Streaming when that exceeded the budget and training computed
	// the features of the pairs it looked at instead).
	Candidates int64
	MemoBytes  int64
	Streaming  bool
	// FeatureSeconds and OptSeconds time the feature pass and OPT-ADG.
	FeatureSeconds, OptSeconds float64
}

func (m *Model) Name() string { return m.v.name }

// Variant is the report label of the fitted representation, e.g.
// "FEBRi-slim".
func (m *Model) Variant() string { return m.v.label }

// Info describes the last fit (zero after UnmarshalBinary).
func (m *Model) Info() Info { return m.info }

// Theta returns a copy of the learnt weights, in feature order
// [mean, std, min, max, len, sum, missing] per side, item side first.
func (m *Model) Theta() []float64 { return slices.Clone(m.theta) }

// FeatureNames names the entries of Theta.
func (m *Model) FeatureNames() []string {
	var out []string
	for _, side := range []struct {
		on   bool
		name string
	}{{m.v.item, "item."}, {m.v.user, "user."}} {
		if side.on {
			for _, f := range featureNames {
				out = append(out, side.name+f)
			}
		}
	}
	return out
}

// slimFit is a fitted slim model as FEBRi-slim takes it: its fsSLIM
// weights (recsys.ItemP.Affinities) and parameters.
type slimFit struct {
	w      *recsys.Neighbours
	k      int
	l1, l2 float64
}

// slimFitOf is m as a slimFit; ok is false unless m is a fitted slim model.
func slimFitOf(m recsys.Model) (f slimFit, ok bool) {
	s, ok := m.(*recsys.ItemP)
	if !ok || s.Name() != "slim" || s.Affinities() == nil {
		return slimFit{}, false
	}
	p := recsys.ParamsOf(s)
	return slimFit{w: s.Affinities(), k: int(p["k"]), l1: p["l1"], l2: p["l2"]}, true
}

// slimOf is o.SLIM when it is a fitted slim model usable for x and k.
func slimOf(o Options, x *recsys.Matrix, k int) (slimFit, bool) {
	f, ok := slimFitOf(o.SLIM)
	return f, ok && f.w.Rows() == x.Items() && f.k == k
}

func (m *Model) Fit(ctx context.Context, x *recsys.Matrix, p recsys.Params) error {
	p = p.WithDefaults()
	o, err := optionsOf(p)
	if err != nil {
		return err
	}
	var slimW *recsys.Neighbours
	if slim, ok := slimOf(o, x, p.K); ok {
		slimW, p.L1, p.L2 = slim.w, slim.l1, slim.l2
	}
	var ho *holdout
	if o.Holdout > 0 {
		if ho, err = newHoldout(x, o.Holdout, o.Seed, nil, nil); err != nil {
			return err
		}
	}
	data, err := prepare(ctx, x, m.v, p, o, slimW, ho)
	if err != nil {
		return err
	}
	if err := m.train(ctx, data, p.K, p.L1, p.L2, o, p.Progress); err != nil {
		return err
	}
	if m.ext.users != nil {
		// The memo of KNN(u) served training; a served model scores live
		// histories and need not keep it.
		m.ext.users.DropMemo()
	}
	return nil
}

// fitData is what one FEBR fit trains on: full holds the features over
// the training matrix (the model's; with validation items, their ADG
// decides early stopping) and train the pairs OPT-ADG draws, full itself
// or, with a holdout, the features over the rest with the held-out items
// as positives.
type fitData struct {
	full, train *trainSet
	seconds     float64
}

// prepare builds the extractors and training sets of variant v with
// p.K on x (see extractorFor for p and slimW). With a holdout, the
// SLIM affinity of the rest is fitted with p.L1 and p.L2.
func prepare(ctx context.Context, x *recsys.Matrix, v variant, p recsys.Params, o Options, slimW *recsys.Neighbours, ho *holdout) (*fitData, error) {
	start := time.Now()
	ext, err := extractorFor(ctx, x, v, p, slimW)
	if err != nil {
		return nil, err
	}
	budget := o.MemoryBudget
	if ho != nil && len(o.Validation) == 0 {
		budget = -1 // only the statistics are needed
	}
	d := &fitData{}
	if d.full, err = newTrainSet(ctx, x, ext, nil, budget, p.Progress); err != nil {
		return nil, err
	}
	d.train = d.full
	if ho != nil {
		ph := p
		ph.Cache = ho.cache
		extH, err := extractorFor(ctx, ho.x, v, ph, nil)
		if err != nil {
			return nil, err
		}
		if d.train, err = newTrainSet(ctx, ho.x, extH, ho.pos, o.MemoryBudget, p.Progress); err != nil {
			return nil, err
		}
	}
	d.seconds = time.Since(start).Seconds()
	return d, nil
}

// train runs OPT-ADG on data and makes m the resulting model.
func (m *Model) train(ctx context.Context, data *fitData, k int, l1, l2 float64, o Options, progress recsys.ProgressFunc) error {
	start := time.Now()
	res, err := data.train.optADG(ctx, data.full.ext.initialTheta(), o.optConfig(progress), data.full)
	if err != nil {
		return err
	}
	m.set(data.full.ext, data.full.x, k, o.Lambda, l1, l2, res.theta)
	m.valRanks = res.ranks
	m.info = Info{
		Iterations: res.iterations, ValidationADG: res.validationADG, Evaluations: res.evaluations, Updates: res.updates,
		Candidates: data.full.candidates, MemoBytes: data.full.memoBytes, Streaming: data.full.blocks == nil,
		FeatureSeconds: data.seconds, OptSeconds: time.Since(start).Seconds(),
	}
	if data.train != data.full {
		m.info.MemoBytes += data.train.memoBytes
		m.info.Streaming = m.info.Streaming || data.train.blocks == nil
	}
	return nil
}

func (m *Model) set(ext *extractor, x *recsys.Matrix, k int, lambda, l1, l2 float64, theta []float64) {
	m.ext, m.k, m.lambda, m.theta = ext, k, lambda, theta
	m.x = nil
	if m.v.user {
		m.x = x
	}
	m.l1, m.l2 = 0, 0
	if m.v.affinity == affSLIM {
		m.l1, m.l2 = l1, l2
	}
	zMiss := make([]float64, ext.dim)
	ext.zscore(ext.missingRaw(), zMiss)
	m.sMiss = dot(theta, zMiss)
}

func (m *Model) Score(history []uint32, scores []float64) { m.ScoreUser(-1, history, scores) }

// ScoreUser fills θ·z(φ(u, i)) for the candidate items and the missing
// score elsewhere (self as in UserScorer).
func (m *Model) ScoreUser(self int, history []uint32, scores []float64) {
	recsys.FillScores(scores, m.ext.nItems, func(buf []float64) {
		for i := range buf {
			buf[i] = m.sMiss
		}
		z := make([]float64, m.ext.dim)
		m.ext.extract(self, history, func(i uint32, raw []float64) {
			m.ext.zscore(raw, z)
			buf[i] = dot(m.theta, z)
		})
	})
}

// Similar returns the item neighbour list KNN(i) with its affinities,
// best first, for the variants with an item side (for the SLIM affinity,
// the neighbours with a non-zero fsSLIM weight, as slim lists them); nil
// for FEBRu, which keeps no item lists.
func (m *Model) Similar(item uint32) []recsys.Neighbour {
	if m.ext.items == nil || int(item) >= m.ext.nItems {
		return nil
	}
	row := m.ext.items.fwd.Row(int(item))
	if m.v.affinity != affSLIM {
		return row
	}
	out := make([]recsys.Neighbour, 0, len(row))
	for _, e := range row {
		if e.Value > 0 {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, recsys.CompareNeighbours)
	return out
}

// Params reports k, λ and, for the SLIM affinity, the fsSLIM constants
// (ParamsOf).
func (m *Model) Params() map[string]float64 {
	out := map[string]float64{"k": float64(m.k), "lambda": m.lambda}
	if m.v.affinity == affSLIM {
		out["l1"], out["l2"] = m.l1, m.l2
	}
	return out
}
