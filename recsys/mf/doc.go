// Package mf holds the matrix factorisation recommenders of docs/design.md#models:
//
//   - bpr: Bayesian Personalised Ranking (Rendle et al. 2009; lecture seed
//     004): SGD on sampled triples (u, i⁺, j⁻) with item biases and ℓ2
//     regularisation.
//   - wrmf: weighted regularised matrix factorisation (Hu et al. 2008):
//     alternating least squares with confidence 1 + α on the positives,
//     conjugate-gradient solves and the YᵀY precomputation.
//   - ials: iALS as Rendle et al. (2022) tune it: weight α₀ on every
//     unobserved cell, frequency-scaled regularisation λ(|Iᵤ| + α₀|I|)^ν,
//     N(0, σ²/d) initial factors, the same CG-within-ALS solver as wrmf.
//   - mfauc: matrix factorisation for (local) AUC (seed 003 §2): the
//     objective of Eq. 3 with the square-hinge, square, sigmoid or logistic
//     loss, tanh rank weighting, item-distribution exponent τ, row and
//     column sampling, and the parallel blockwise SGD of §2.2.1.
//
// The models register themselves with recsys under those names; import the
// package for its side effect wherever models are listed by name.
//
// Every model keeps user factors U (one row per training user) and item
// factors V, and scores item i for a user u as u·vᵢ (plus a bias for bpr).
// Score works from the live history: when it equals the training history of
// a user (found by a 64-bit hash of the history), that user's fitted factor
// is used; otherwise the user is folded in (FoldIn): wrmf and ials solve the
// ALS normal equations exactly, bpr and mfauc run seeded SGD on the user's
// factor alone with V fixed, averaging the iterates of the second half.
//
// Hyper-parameters come from recsys.Params: K is the number of factors
// (the main parameter of dissertation §4.7.3) and Extra carries the others
// under the keys each model documents. Every random process is seeded
// (Extra["seed"], default 1): the same data, parameters and seed give the
// same model.
//
// Works cited in the comments are listed in docs/references.md; a bare
// section, equation or algorithm number refers to seed 003.
package mf

import "github.com/recsys-engine/recsys/recsys"

func init() {
	newBPR := func() recsys.Model { return &BPR{} }
	recsys.Register("bpr", recsys.Kind{New: newBPR, Candidates: candidates("bpr"), FitGrid: fitConcurrently(newBPR),
		Service: service(bprEpochs, map[string]float64{"lambda": 0.025}, map[string]float64{"lambda": 0.0025})})
	recsys.Register("wrmf", recsys.Kind{New: func() recsys.Model { return &WRMF{} }, Candidates: candidates("wrmf"),
		Service: service(wrmfEpochs, map[string]float64{"alpha": 1}, map[string]float64{"alpha": 0.01}, map[string]float64{"alpha": 10, "lambda": 30})})
	// iALS (α₀, λ): (0.1, 0.03) won on MovieLens 100K, (0.1, 0.01) on the
	// sparser Last.fm, (0.01, 0.03) came next there (docs/evaluation.md).
	recsys.Register("ials", recsys.Kind{New: func() recsys.Model { return &IALS{} }, Candidates: candidates("ials"),
		Service: service(ialsEpochs, map[string]float64{"alpha0": 0.01, "lambda": 0.03}, map[string]float64{"alpha0": 0.1, "lambda": 0.01},
			map[string]float64{"alpha0": 0.1, "lambda": 0.03})})
	recsys.Register("mfauc", recsys.Kind{New: func() recsys.Model { return &MFAUC{} }, Candidates: candidates("mfauc"),
		Service: service(mfaucEpochs)})
}

// The default passes of each model over the data: bpr's epochs of |X| SGD
// steps, wrmf's and ials's alternations, mfauc's iterations.
const (
	bprEpochs   = 100
	wrmfEpochs  = 15
	ialsEpochs  = 16
	mfaucEpochs = 30
)

// minScaledEpochs is the fewest passes the service's scale rule keeps.
const minScaledEpochs = 5

// service is the service's use of a factorisation: compared in auto mode,
// with the secondary settings its grid tries at every number of factors
// (shorter than evaluation's grids, mfgrid.go of recsys/eval) and its
// default epochs, which the scale rule shortens on large data.
func service(epochs int, settings ...map[string]float64) recsys.Service {
	return recsys.Service{Auto: true, Settings: settings, Epochs: epochs, MinEpochs: minScaledEpochs, FixedGridAtScale: true}
}

// candidates is the grid of the model registered as name (dissertation
// §4.7.3: the number of factors is the main parameter): every number of
// factors in g.Factors (none: the default) with every secondary setting
// of g.Extra[name] (none: the defaults). The data does not cap it.
func candidates(name string) func(g recsys.Grid, _ recsys.Caps) []recsys.Params {
	return func(g recsys.Grid, _ recsys.Caps) []recsys.Params {
		factors := g.Factors
		if len(factors) == 0 {
			factors = []int{0}
		}
		secondary := g.Extra[name]
		if len(secondary) == 0 {
			secondary = []map[string]float64{nil}
		}
		var out []recsys.Params
		for _, k := range factors {
			for _, e := range secondary {
				out = append(out, recsys.Params{K: k, Extra: e})
			}
		}
		return out
	}
}
