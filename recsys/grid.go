package recsys

import (
	"context"
	"slices"
)

// Grid is the hyper-parameter search space of dissertation §4.7.3 that each
// model kind draws its candidates from (Kind.Candidates): the main
// parameter (k, or the number of factors), and the secondary parameters
// tuned for every main value. The service and the offline evaluation fill
// it with grids of different lengths (jobs.DefaultTrainOptions,
// eval.DefaultGrid); the search itself is recsys/eval's Tune.
type Grid struct {
	// K is the neighbourhood size k of the neighbourhood models and FEBR.
	K []int
	// SLIM holds the fsSLIM (ℓ1, ℓ2) pairs tried, in order, for every k.
	SLIM [][2]float64
	// Factors is the number of factors of the matrix factorisations.
	Factors []int
	// Extra holds, by model name, the secondary settings (Params.Extra)
	// tried for every number of factors; a model without an entry tries
	// its defaults only.
	Extra map[string][]map[string]float64
	// Lambda is FEBR's secondary grid, the ℓ2 constant λ on θ (empty:
	// febr.DefaultLambdas).
	Lambda []float64
	// KByBaseline makes FEBR choose k (and the fsSLIM pair) by the
	// validation ADG of the aggsum predictor OPT-ADG starts from and run
	// OPT-ADG for that k alone (febr.Grid.KByBaseline): the service's
	// quicker search.
	KByBaseline bool
}

// Caps are the limits the data puts on k ("capped by the data", §4.7.3):
// a k at least as long as every neighbour list gives the same model as
// that length, so a search stops at the first such k.
type Caps struct {
	// Items is the longest item neighbour list (NeighbourCache.MaxRow).
	Items int
	// Users is |U| − 1, the longest possible user neighbour list.
	Users int
}

// CapK keeps the values of k below limit and the first one at or above
// it, sorted: every larger k gives the same model as that one.
func CapK(ks []int, limit int) []int {
	ks = slices.Sorted(slices.Values(ks))
	var out []int
	for _, k := range ks {
		out = append(out, k)
		if k >= limit {
			break
		}
	}
	return out
}

// kCandidates is one candidate per k, the grid of the models whose only
// parameter is k.
func kCandidates(ks []int) []Params {
	out := make([]Params, len(ks))
	for n, k := range ks {
		out[n] = Params{K: k}
	}
	return out
}

// Choice is the outcome of a model kind's own search (Kind.Search).
type Choice struct {
	// Model is the chosen model, fitted on the search's matrix.
	Model Model
	// Params refit Model on the search's matrix (with the same
	// validation items, where the model stops early on them).
	Params Params
	// Refit are the parameters that fit the chosen model on all the data,
	// where there are no validation items left to stop on.
	Refit Params
	// ValidationADG is the validation ADG the choice was made by.
	ValidationADG float64
	// ValidationRanks, when the search kept them, are the chosen model's
	// ranks of every user's validation items (Def. 4.1, as RankHeldOut
	// ranks them on the search's matrix; nil for a user without any), so
	// that its measures need no second validation pass.
	ValidationRanks [][]int
}

// SearchFunc is a model kind's own search over its grid on x, choosing by
// the ADG of the validation items val (per user of x); p carries the
// neighbour cache, progress and model options common to every fit, and
// onFit, when not nil, is called after every fit.
type SearchFunc func(ctx context.Context, x *Matrix, val [][]uint32, g Grid, c Caps, p Params, onFit func()) (Choice, error)
