package recsys

import (
	"math"
	"slices"
	"unsafe"
)

// The point-cost formulas (Kind.PointCost, Kind.GridCost) count the
// elementary operations of a fit and of a validation pass from the
// algorithm and the data's size: U users, I items, P positives, r = P/U
// positives a user, c = P/I users an item, V = Shape.Validated() users
// validating. OpSeconds turns a count into wall seconds on 2 cores; a
// kind's own factor (the constants below each formula) says how many
// elementary operations one of its counted steps takes. A search corrects
// both by the ratio of its measured to predicted seconds once it has
// fitted points (recsys/eval), so they need only be of the right order.
// They were measured on generated data of 2,000 users × 1,700 items and
// 2,000 × 8,000 (docs/evaluation.md "The time budget").

// OpSeconds is the wall seconds on 2 cores of one elementary operation of
// the point-cost formulas: a multiply-add in memory the cache holds.
const OpSeconds = 1e-9

// ValidationOps counts one validation pass (eval.Tune's): V users each
// scored with perUser operations and its items ranked among all I (a
// pass over the scores, valRank operations an item).
func ValidationOps(s Shape, perUser float64) float64 {
	return float64(s.Validated()) * (valRank*float64(s.Items) + perUser)
}

// valRank is the operations of ranking one item's score in a validation
// pass: the scores cleared, read and compared with the held-out items'.
const valRank = 6

// perRow is s's r, the positives of the mean user, and perCol its c.
func (s Shape) perRow() float64 { return float64(s.Positives) / float64(max(1, s.Users)) }
func (s Shape) perCol() float64 { return float64(s.Positives) / float64(max(1, s.Items)) }

// itemK is p's k (DefaultK for 0) capped by the other items, the length
// of an item list; userK likewise for user lists.
func itemK(s Shape, p Params) float64 { return float64(max(1, min(p.WithDefaults().K, s.Items-1))) }
func userK(s Shape, p Params) float64 { return float64(max(1, min(p.WithDefaults().K, s.Users-1))) }

// itemListPoint is the point cost of an item model whose lists come from
// the search's shared NeighbourCache (itemknn, kunn-i; built once, by the
// search's first fit): a fit truncates and reverses every item's list at
// k, I·k (itemListFit each), or builds them past the cache's k_max
// (listBuild), and a validation user adds k entries for each of its r
// items (itemScore).
func itemListPoint(s Shape, p Params) float64 {
	k := itemK(s, p)
	return OpSeconds * (itemListFit*float64(s.Items)*k + listBuild(s, k) + ValidationOps(s, itemScore(s, k)))
}

// listBuild is the computation of item lists of k that the cache does not
// hold (k above Shape.K, its k_max): every item's co-counts over its
// users' rows, Σᵤ r_u² ≈ P·r·rp3Skew (the users of many items dominate),
// and the k best of the items reached pushed through a heap, log₂ k
// each.
func listBuild(s Shape, k float64) float64 {
	if k <= float64(s.K()) {
		return 0
	}
	return float64(s.Positives) * s.perRow() * rp3Skew * (1 + math.Log2(k))
}

// itemScore is the scoring of a validation user by item lists of k: k
// entries added for each of its r items.
func itemScore(s Shape, k float64) float64 { return itemEntry * s.perRow() * k }

const itemListFit, itemEntry = 4, 2

// userListPoint is the point cost of a user model (userknn, kunn-u):
// nothing at fit, and at scoring each validation user's neighbours
// searched over the users of its r items (userSearch·r·c: a popular
// item's users count more often, which userSearch holds) and the k
// neighbours' rows added, k·r. The search memoises the lists at k_max
// for the validation users, so a later point pays less than this.
func userListPoint(s Shape, p Params) float64 {
	r, c := s.perRow(), s.perCol()
	return OpSeconds * ValidationOps(s, userSearch*r*c+userK(s, p)*r)
}

const userSearch = 6

// kunnPoint is KUNN's, both sides (Eq. 4.4): itemListPoint's lists and
// userListPoint's search.
func kunnPoint(s Shape, p Params) float64 {
	k, r, c := itemK(s, p), s.perRow(), s.perCol()
	return OpSeconds * (itemListFit*float64(s.Items)*k + listBuild(s, k) + ValidationOps(s, itemScore(s, k)+userSearch*r*c+userK(s, p)*r))
}

// slimPoint is one fsSLIM candidate of a batch (slimFitGrid): for every
// item, cyclic coordinate descent on its k×k Gram matrix, a sweep costing
// |active|·k, the active set about k/slimActive and slimSweeps sweeps in
// all: I·k²·slimSweeps/slimActive; validation as itemknn's.
func slimPoint(s Shape, p Params) float64 {
	k := itemK(s, p)
	return OpSeconds * (float64(s.Items)*k*k*slimSweeps/slimActive + ValidationOps(s, itemScore(s, k)))
}

const slimSweeps, slimActive = 16, 8

// slimGrid is what a batch of fsSLIM candidates shares: the cosine lists
// at the batch's largest k (listBuild past the cache's), and every item's
// Gram matrix over KNN(j) at that k counted once from the pair counter,
// I·k² (slimLoad each).
func slimGrid(s Shape, ps []Params) float64 {
	k := 0.0
	for _, p := range ps {
		k = max(k, itemK(s, p))
	}
	return OpSeconds * (slimLoad*float64(s.Items)*k*k + listBuild(s, k))
}

const slimLoad = 1.5

// easePoint is one λ of EASE, on the I items with a positive
// (Shape.ActiveItems; the others have no weights). Dense (up to the dense
// limit):
// the Gram matrix, Σᵤ r_u²/2 ≈ P·r/2, and its Cholesky factorisation and
// inverse, I³ (potrf I³/3, potri 2I³/3, easeDense each), then the
// weights, I²; a validation user adds a dense row of I for each of its r
// items. Sparse: one k×k Cholesky factorisation per item, I·k³/3
// (easeSparse each; the counts are the batch's, easeGrid), and lists of k
// as itemknn's.
func easePoint(s Shape, p Params) float64 {
	_, maxDense, k, err := easeLimits(p)
	if err != nil {
		return 0
	}
	n, r := float64(s.active()), s.perRow()
	if s.active() <= maxDense {
		return OpSeconds * (float64(s.Positives)*r/2 + easeDense*n*n*n + n*n + ValidationOps(s, r*n))
	}
	kf := float64(max(1, min(k, s.Items-1)))
	return OpSeconds * (easeSparse*n*kf*kf*kf/3 + ValidationOps(s, itemScore(s, kf)))
}

// LAPACK's blocked factorisations run several flops per elementary
// operation's time.
const easeDense, easeSparse = 0.13, 0.1

// easeGrid is what a sparse batch of λ shares: the cosine lists at k
// (listBuild past the cache's) and each item's k×k Gram matrix counted
// once, I·k² (slimLoad each, the counter fsSLIM uses).
// Dense λ are fitted one by one: nothing is shared.
func easeGrid(s Shape, ps []Params) float64 {
	if len(ps) == 0 {
		return 0
	}
	_, maxDense, k, err := easeLimits(ps[0])
	if err != nil || s.active() <= maxDense {
		return 0
	}
	kf := float64(max(1, min(k, s.Items-1)))
	return OpSeconds * (slimLoad*float64(s.active())*kf*kf + listBuild(s, kf))
}

// rp3Point is one RP³β candidate of a batch (rp3FitGrid): its rows are
// prefixes of the batch's, truncated to k, I·k; validation as itemknn's.
func rp3Point(s Shape, p Params) float64 {
	k := itemK(s, p)
	return OpSeconds * (itemListFit*float64(s.Items)*k + ValidationOps(s, itemScore(s, k)))
}

// rp3Grid is what a batch of RP³β candidates shares: one walk from every
// item, Σᵤ r_u² ≈ P·r·rp3Skew (as listBuild's co-counts), and for every
// distinct β the k_max best of each row's reached items pushed
// through a heap, as many again times log₂ k_max. Past rp3GridMemory the
// batch is fitted one candidate at a time: a walk and a selection each.
func rp3Grid(s Shape, ps []Params) float64 {
	var betas []float64
	kmax := 1.0
	for _, p := range ps {
		b, err := rp3Beta(p)
		if err != nil {
			return 0
		}
		if !slices.Contains(betas, b) {
			betas = append(betas, b)
		}
		kmax = max(kmax, itemK(s, p))
	}
	walk := float64(s.Positives) * s.perRow() * rp3Skew
	if float64(len(betas))*float64(s.Items)*kmax*float64(unsafe.Sizeof(Neighbour{})) > float64(rp3GridMemory) {
		return OpSeconds * float64(len(ps)) * walk * (1 + math.Log2(kmax))
	}
	return OpSeconds * walk * (1 + float64(len(betas))*math.Log2(kmax))
}

const rp3Skew = 3

// trendingPoint is one half-life of trending: each positive's decayed
// weight summed, P, and a validation pass over its one score list.
func trendingPoint(s Shape, _ Params) float64 {
	return OpSeconds * (trendingFit*float64(s.Positives) + ValidationOps(s, 0))
}

const trendingFit = 20
