package jobs

import (
	"maps"
	"math"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/eval"
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
