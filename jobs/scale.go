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

// mfEpochs are the matrix factorisations' default epochs (recsys/mf: bpr
// 100 epochs of |X| steps, wrmf 15 and ials 16 alternations, mfauc 30
// iterations) and the floor the scale rule keeps.
var mfEpochs = map[string]struct{ def, floor int }{
	"bpr":   {100, 5},
	"wrmf":  {15, 5},
	"ials":  {16, 5},
	"mfauc": {30, 5},
}

// scaleTuning applies the scale rule to model name's tuning when the job
// trains on more than ScalePositives positives, and reports whether it
// did. A fit of bpr, wrmf or ials costs its epochs times O(|X|), so above
// the threshold each one runs its default epochs × ScalePositives/|X|
// (rounded up, at least the floor of mfEpochs; an "epochs" set in the
// grid is kept): the work of an epoch grows with |X|, and so do the SGD
// steps and the positives every ALS solve sees, so fewer passes reach a
// comparable fit. mfauc's iterations get the same rule. Its grid is not
// extended past its ends (Tuning.Extend < 0: a factor count past 50 costs
// O(d²) per row at every epoch); a choice at an end is reported as
// GridEdge. The FEBR variants' grids are not extended either: past the
// top of the grid (k = 200) each extension is one more search (the
// neighbour lists at the new k, the feature statistics, a validation pass
// and OPT-ADG for every λ), ~70 CPU s per variant at 20M events. Other
// models are untouched.
func scaleTuning(name string, positives int, t *eval.Tuning) bool {
	if positives <= scalePositives {
		return false
	}
	if febr.IsVariant(name) { // the seven variants; febr-blend is not one
		t.Extend = -1
		return true
	}
	e, ok := mfEpochs[name]
	if !ok {
		return false
	}
	epochs := max(e.floor, int(math.Ceil(float64(e.def)*float64(scalePositives)/float64(positives))))
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
	t.Extend = -1
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
