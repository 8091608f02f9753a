package jobs

import (
	"maps"
	"math"
	"reflect"

	"recsys/recsys"
	"recsys/recsys/eval"
	"recsys/recsys/febr"
)

// ScalePositives is the size above which a training job sizes the matrix
// factorisations' work by the data (scaleTuning): 500,000 positives, five
// times MovieLens 100K and Last.fm, which train as before.
const ScalePositives = 500_000

// scalePositives is ScalePositives, lowered by tests to exercise the rule
// on small data.
var scalePositives = ScalePositives

// scaleTuning applies the scale rule to model name's tuning when the job
// trains on more than ScalePositives positives, and reports whether it
// did. A fit with epochs (recsys.Service.Epochs: bpr, wrmf, ials, mfauc)
// costs its epochs times O(|X|), so above the threshold each one runs its
// default epochs × ScalePositives/|X| (rounded up, at least its
// MinEpochs; an "epochs" set in the grid is kept): the work of an epoch
// grows with |X|, and so do the SGD steps and the positives every ALS
// solve sees, so fewer passes reach a comparable fit. A kind with
// Service.FixedGridAtScale (the factorisations: a factor count past 50
// costs O(d²) per row at every epoch; the FEBR variants: each step past
// k = 200 is one more search of neighbour lists, feature statistics,
// validation and OPT-ADG for every λ) keeps to its grid (Tuning.Extend <
// 0); a choice at an end is reported as GridEdge. Other models are
// untouched.
func scaleTuning(name string, positives int, t *eval.Tuning) bool {
	kind, err := recsys.KindOf(name)
	if positives <= scalePositives || err != nil || kind.Service.Epochs == 0 && !kind.Service.FixedGridAtScale {
		return false
	}
	if kind.Service.FixedGridAtScale {
		t.Extend = -1
	}
	if kind.Service.Epochs == 0 {
		return true
	}
	e := kind.Service
	epochs := max(e.MinEpochs, int(math.Ceil(float64(e.Epochs)*float64(scalePositives)/float64(positives))))
	settings := t.Grid.Extra[name]
	if len(settings) == 0 {
		settings = []map[string]float64{nil}
	}
	scaled := make([]map[string]float64, len(settings))
	for c, s := range settings {
		scaled[c] = maps.Clone(s)
		if scaled[c] == nil {
			scaled[c] = map[string]float64{}
		}
		if _, set := scaled[c]["epochs"]; !set {
			scaled[c]["epochs"] = float64(epochs)
		}
	}
	extra := maps.Clone(t.Grid.Extra)
	if extra == nil {
		extra = map[string][]map[string]float64{}
	}
	extra[name] = scaled
	t.Grid.Extra = extra
	return true
}

// blendBase is a base of febr-blend as the job fitted it: the model chosen
// on the validation split (kept above ScalePositives only) and its refit
// on all the data, with their parameters.
type blendBase struct {
	tuned, full   recsys.Model
	tunedP, fullP recsys.Params
}

// blendOptions are febr-blend's options for its search on the split's
// training matrix: above ScalePositives the bases the job tuned on the
// same split, validation users and criterion (validation ADG) are taken
// as chosen (febr.BlendOptions.Fitted) instead of the blend searching
// their grids again; the others are searched as before. θ is learnt on
// the split's validation items (febr.BlendOptions.HeldOut) when every
// base is the job's: those fits never saw them, so no base is fitted
// again on a holdout of the blend's own (at 20M events that was seven
// more fits and their gigabytes).
func blendOptions(bases map[string]blendBase, s *eval.Split) *febr.BlendOptions {
	names := febr.BlendBases()
	bo := &febr.BlendOptions{Bases: names, Params: make([]recsys.Params, len(names)), Fitted: make([]recsys.Model, len(names)),
		FittedOn: s.Train, HeldOut: s.Validation}
	for b, n := range names {
		if bb, ok := bases[n]; ok && bb.tuned != nil {
			bo.Params[b], bo.Fitted[b] = bareParams(bb.tunedP), bb.tuned
		}
	}
	return bo
}

// reuseFull returns the blend's refit options o with the job's refits on x
// of the bases whose chosen parameters are the job's: the same fit, so the
// same model, without fitting it again.
func reuseFull(bases map[string]blendBase, o *febr.BlendOptions, x *recsys.Matrix) *febr.BlendOptions {
	out := *o
	out.Fitted, out.FittedOn = make([]recsys.Model, len(o.Bases)), x
	for b, n := range o.Bases {
		if bb, ok := bases[n]; ok && b < len(o.Params) && sameParams(bareParams(bb.fullP), o.Params[b]) {
			out.Fitted[b] = bb.full
		}
	}
	return &out
}

// bareParams is p without the fit's context (cache, warm start, progress).
func bareParams(p recsys.Params) recsys.Params {
	p.Cache, p.Init, p.Progress = nil, nil, nil
	return p
}

// sameParams reports whether two bases' parameters are the same fit.
func sameParams(a, b recsys.Params) bool {
	return reflect.DeepEqual(bareParams(a), bareParams(b))
}
