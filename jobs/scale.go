package jobs

import (
	"maps"
	"math"

	"recsys/recsys/eval"
)

// ScalePositives is the size above which a training job sizes the matrix
// factorisations' work by the data (scaleTuning): 500,000 positives, five
// times MovieLens 100K and Last.fm, which train as before.
const ScalePositives = 500_000

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
// GridEdge. Other models are untouched.
func scaleTuning(name string, positives int, t *eval.Tuning) bool {
	e, ok := mfEpochs[name]
	if !ok || positives <= ScalePositives {
		return false
	}
	epochs := max(e.floor, int(math.Ceil(float64(e.def)*ScalePositives/float64(positives))))
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
