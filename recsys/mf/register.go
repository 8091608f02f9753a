package mf

import "github.com/recsys-engine/recsys/recsys"

// init registers bpr, wrmf, ials and mfauc with recsys, in report order.
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

// serviceFactors are the numbers of factors the service tries, shorter
// than evaluation's grid.
var serviceFactors = []int{10, 50}

// minScaledEpochs is the fewest passes the service's scale rule keeps.
const minScaledEpochs = 5

// service is the service's use of a factorisation: compared in auto mode,
// with the secondary settings its grid tries at every number of factors
// (shorter than evaluation's grids, mfgrid.go of recsys/eval) and its
// default epochs, which the scale rule shortens on large data.
func service(epochs int, settings ...map[string]float64) recsys.Service {
	return recsys.Service{Auto: true, Settings: settings, Grid: recsys.Grid{Factors: serviceFactors},
		Epochs: epochs, MinEpochs: minScaledEpochs, FixedGridAtScale: true}
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
