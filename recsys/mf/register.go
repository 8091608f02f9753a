package mf

import (
	"fmt"
	"slices"

	"github.com/recsys-engine/recsys/recsys"
)

// init registers bpr, wrmf, ials and mfauc with recsys, in report order.
// Auto mode compares wrmf and ials; bpr and mfauc, behind them on ADG and
// MAP (docs/evaluation.md), are trained when named.
func init() {
	newBPR := func() recsys.Model { return &BPR{} }
	recsys.Register("bpr", recsys.Kind{New: newBPR, Candidates: candidates("bpr"), FitGrid: fitConcurrently(newBPR), PointCost: bprPoint,
		Service: service(bprEpochs, false, recsys.CostModel(bprTime, bprMemory), map[string]float64{"lambda": 0.025}, map[string]float64{"lambda": 0.0025})})
	recsys.Register("wrmf", recsys.Kind{New: func() recsys.Model { return &WRMF{} }, Candidates: candidates("wrmf"), PointCost: alsPoint(wrmfEpochs),
		Service: service(wrmfEpochs, true, recsys.CostModel(wrmfTime, alsMemory), map[string]float64{"alpha": 1}, map[string]float64{"alpha": 0.01}, map[string]float64{"alpha": 10, "lambda": 30})})
	// iALS (α₀, λ): (0.1, 0.03) won on MovieLens 100K, (0.1, 0.01) on the
	// sparser Last.fm, (0.01, 0.03) came next there (docs/evaluation.md).
	recsys.Register("ials", recsys.Kind{New: func() recsys.Model { return &IALS{} }, Candidates: candidates("ials"), PointCost: alsPoint(ialsEpochs),
		Service: service(ialsEpochs, true, recsys.CostModel(ialsTime, alsMemory), map[string]float64{"alpha0": 0.01, "lambda": 0.03}, map[string]float64{"alpha0": 0.1, "lambda": 0.01},
			map[string]float64{"alpha0": 0.1, "lambda": 0.03})})
	recsys.Register("mfauc", recsys.Kind{New: func() recsys.Model { return &MFAUC{} }, Candidates: candidates("mfauc"), PointCost: mfaucPoint,
		Service: service(mfaucEpochs, false, recsys.CostModel(mfaucTime, mfaucMemory))})
}

// The training times of the factorisations: power laws fitted (least
// squares of log seconds on log positives) to the tune + fit wall seconds
// at 1M, 5M and 20M positives on 27,000 items of docs/performance.md's
// "Auto mode at 1M, 5M and 20M" table, with the scale rule's epochs
// (jobs.ScalePositives): bpr 31, 40, 112 s; wrmf 12, 19, 62 s; ials 12,
// 22, 82 s; mfauc 16, 12, 48 s.
var (
	bprTime   = recsys.TimeLaw{At1M: 27.1, Exponent: 0.422}
	wrmfTime  = recsys.TimeLaw{At1M: 10.5, Exponent: 0.541}
	ialsTime  = recsys.TimeLaw{At1M: 10.5, Exponent: 0.634}
	mfaucTime = recsys.TimeLaw{At1M: 12.2, Exponent: 0.352}
)

// factorBytes is one fitted factorisation at the service's largest number
// of factors d: (|U| + |I|)·d float64s, the item biases and the users'
// history hashes and index (factors.init).
func factorBytes(s recsys.Shape) (int64, int) {
	d := slices.Max(serviceFactors)
	return int64(s.Users+s.Items)*int64(d)*8 + int64(s.Items)*8 + int64(s.Users)*24, d
}

// alsMemory is wrmf's and ials's: three factorisations at once, the
// search's best, the one being fitted and the refit (the per-row k×k
// solves are scratch).
func alsMemory(s recsys.Shape) (int64, string) {
	f, d := factorBytes(s)
	return 3 * f, fmt.Sprintf("factors of %s users and items × %d, three at once", recsys.FormatCount(int64(s.Users+s.Items)), d)
}

// bprMemory is bpr's: the whole grid's factorisations, which
// fitConcurrently holds together, the refit, and the training pairs of
// the fits running at once (8 bytes a positive each).
func bprMemory(s recsys.Shape) (int64, string) {
	f, d := factorBytes(s)
	grid := int64(len(serviceFactors) * 2) // the two λ settings at every d
	return (grid+1)*f + 2*int64(s.Positives)*8, fmt.Sprintf("factors of %s users and items × %d for the whole grid", recsys.FormatCount(int64(s.Users+s.Items)), d)
}

// mfaucMemory is mfauc's: three factorisations as alsMemory, and its
// trainer's per-positive permutations and cumulative weights (24 bytes a
// positive).
func mfaucMemory(s recsys.Shape) (int64, string) {
	f, d := factorBytes(s)
	return 3*f + 24*int64(s.Positives), fmt.Sprintf("factors of %s users and items × %d, and 24 bytes a positive", recsys.FormatCount(int64(s.Users+s.Items)), d)
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

// service is the service's use of a factorisation: compared in auto mode
// when auto is set, with the secondary settings its grid tries at every
// number of factors (shorter than evaluation's grids, mfgrid.go of
// recsys/eval), its default epochs, which the scale rule shortens on
// large data, and its predicted cost.
func service(epochs int, auto bool, cost func(recsys.Shape) recsys.Cost, settings ...map[string]float64) recsys.Service {
	return recsys.Service{Auto: auto, Settings: settings, Grid: recsys.Grid{Factors: serviceFactors},
		Epochs: epochs, MinEpochs: minScaledEpochs, FixedGridAtScale: true, Cost: cost}
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
