package recsys

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// slimCandidates is fsSLIM's grid: for every k capped by the longest item
// neighbour list, the (ℓ1, ℓ2) pairs in order (consecutive pairs sharing
// ℓ2 let a search warm-start along ℓ1, Params.Init).
func slimCandidates(g Grid, c Caps) []Params {
	var out []Params
	for _, k := range CapK(g.K, c.Items) {
		for _, l := range g.SLIM {
			out = append(out, withSettings([]Params{{K: k, L1: l[0], L2: l[1]}}, g.Extra["slim"])...)
		}
	}
	return out
}

// fitSLIM learns the fsSLIM weights of Ning and Karypis (2011) as used in
// dissertation §4.5.5: for every item j, over the features S = KNN(j)
// (j excluded),
//
//	minimise ½‖x_j − X_S w‖² + (β/2)‖w‖² + λ‖w‖₁  subject to w ≥ 0,
//
// with λ = p.L1 and β = p.L2, by cyclic coordinate descent with an active
// set on the Gram form of the problem: with G = X_Sᵀ X_S and b = X_Sᵀ x_j,
// the gradient is x_lᵀ r = b_l − (G w)_l, so a sweep costs O(|active|·k)
// however long the items' columns are (at 20M events a popular item's
// column holds 10⁵ users). Coordinates are swept only while they are
// non-zero; the inactive ones violating the optimality conditions
// (x_lᵀ r > λ for w_l = 0) join the active set between passes. It returns,
// for each item j, the affinity list A(j, l) = W(l, j) > 0 (so that score
// = X W, §4.5.5), best first. nb holds the cosine KNN(j) lists (their
// values give b: co(j, l) = cos(j, l)·√(c(j)·c(l))); co counts the pairs
// of G (nil: built here). init, when not nil, holds weights to start
// from (a warm start along a regularisation path). Items are solved in
// parallel; each solve is deterministic.
func fitSLIM(ctx context.Context, x *Matrix, nb, init *Neighbours, co *coCounter, p Params) (*Neighbours, error) {
	n, lambda, beta := x.Items(), p.L1, p.L2
	if co == nil {
		var err error
		if co, err = newCoCounter(ctx, x, slimPopularItems); err != nil {
			return nil, err
		}
	}
	rows := make([][]Neighbour, n)
	err := ParallelFor(ctx, n, 16, "slim", p.Progress, func() func(lo, hi int) {
		s := newSLIMSolver(x, co)
		return func(lo, hi int) {
			for j := lo; j < hi; j++ {
				var start []Neighbour
				if init != nil && j < init.Rows() {
					start = init.Row(j)
				}
				rows[j] = s.solve(j, nb.Row(j), start, lambda, beta, p.Tol, p.MaxIter)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return fromRows(rows), nil
}

// FitSLIM learns the fsSLIM weights over the cosine KNN(j) lists nb
// (ItemNeighbours with SimCosine at p.K) with the constants of p (L1, L2,
// Tol, MaxIter; WithDefaults fills them), as slim does (fitSLIM, without a
// warm start): for every item j its affinity list A(j, l) = W(l, j) > 0,
// best first. p.Cache, when built on x, supplies the pair counts of the
// Gram matrices, counted once for every fit on x.
func FitSLIM(ctx context.Context, x *Matrix, nb *Neighbours, p Params) (*Neighbours, error) {
	co, err := slimCounts(ctx, x, p)
	if err != nil {
		return nil, err
	}
	return fitSLIM(ctx, x, nb, nil, co, p)
}

// WarmStart reports whether a search fitting candidate p right after prev
// starts p from prev's solution (Params.Init): consecutive fsSLIM
// candidates with the same k and ℓ2 lie on one ℓ1 regularisation path.
func WarmStart(prev, p Params) bool { return prev.K == p.K && prev.L2 == p.L2 }

// fitSLIMGrid fits fsSLIM for every candidate of a grid (cands, defaults
// filled, in the search's order; raw as the search gave them, for
// WarmStart) in one pass over the items: each item's Gram matrix is
// counted once, over nb's KNN(j) at the largest k of the grid, and every
// candidate solves on its leading block, warm-starting from the previous
// candidate's weights of the item where WarmStart says the search would.
// The result, in candidate order, is what fitting each candidate alone
// gives (the counts are exact integers, each solve deterministic), for one
// Gram matrix per item instead of one per item and candidate.
func fitSLIMGrid(ctx context.Context, x *Matrix, nb *Neighbours, co *coCounter, cands, raw []Params, progress ProgressFunc) ([]*Neighbours, error) {
	n := x.Items()
	if co == nil {
		var err error
		if co, err = newCoCounter(ctx, x, slimPopularItems); err != nil {
			return nil, err
		}
	}
	kmax := 0
	for _, p := range cands {
		kmax = max(kmax, p.K)
	}
	rows := make([][][]Neighbour, len(cands))
	for c := range rows {
		rows[c] = make([][]Neighbour, n)
	}
	err := ParallelFor(ctx, n, 16, "slim", progress, func() func(lo, hi int) {
		s := newSLIMSolver(x, co)
		return func(lo, hi int) {
			for j := lo; j < hi; j++ {
				row := nb.Row(j)
				if !s.load(j, row[:min(kmax, len(row))]) {
					continue
				}
				for c, p := range cands {
					var start []Neighbour
					if c > 0 && WarmStart(raw[c-1], raw[c]) {
						start = rows[c-1][j]
					}
					rows[c][j] = s.solveLoaded(p.K, start, p.L1, p.L2, p.Tol, p.MaxIter)
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]*Neighbours, len(cands))
	for c := range out {
		out[c] = fromRows(rows[c])
	}
	return out, nil
}

// slimFitGrid is slim's Kind.FitGrid (fitSLIMGrid); the first candidate's
// cache and progress serve the whole grid.
func slimFitGrid(ctx context.Context, x *Matrix, raw []Params) ([]func() Model, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	cands := make([]Params, len(raw))
	kmax := 0
	for c, p := range raw {
		cands[c] = p.WithDefaults()
		kmax = max(kmax, cands[c].K)
	}
	pm := cands[0]
	pm.K = kmax
	nb, err := ItemNeighbours(ctx, x, SimCosine, pm)
	if err != nil {
		return nil, err
	}
	co, err := slimCounts(ctx, x, pm)
	if err != nil {
		return nil, err
	}
	w, err := fitSLIMGrid(ctx, x, nb, co, cands, raw, pm.Progress)
	if err != nil {
		return nil, err
	}
	out := make([]func() Model, len(cands))
	for c, p := range cands {
		h, err := halfLifeOf(p, 0)
		if err != nil {
			return nil, err
		}
		out[c] = func() Model {
			side := newRankedItemSide(x.Items(), w[c])
			w[c] = nil // held by the model alone from here
			return &ItemP{name: "slim", k: p.K, l1: p.L1, l2: p.L2, side: side, halfLife: h}
		}
	}
	return out, nil
}

// slimSolver is the per-goroutine scratch space of fitSLIM.
type slimSolver struct {
	x      *Matrix
	co     *coCounter
	sc     *gramScratch // for coCounter.gram
	pos    []int32      // position of an item in S, −1 when absent
	feats  []Neighbour
	full   []float64 // G over the loaded feats, row-major
	fb     []float64 // b over the loaded feats
	sub    []float64 // a leading block of full
	gram   []float64 // G of the current solve: full or sub
	b      []float64 // b_q = co(j, S_q), a prefix of fb
	gw     []float64 // (G w)_q
	w      []float64
	active []int
	isAct  []bool
}

func newSLIMSolver(x *Matrix, co *coCounter) *slimSolver {
	s := &slimSolver{x: x, co: co, sc: newGramScratch(x.Users()), pos: make([]int32, x.Items())}
	for k := range s.pos {
		s.pos[k] = -1
	}
	return s
}

// grow resizes a scratch slice to n zeroed entries.
func grow[E any](v []E, n int) []E {
	v = slices.Grow(v[:0], n)[:n]
	clear(v)
	return v
}

// solve returns the non-zero weights of column j over the features feats
// (cosine KNN(j)), starting from the weights in init (a warm start; nil
// for w = 0).
func (s *slimSolver) solve(j int, feats, init []Neighbour, lambda, beta, tol float64, maxIter int) []Neighbour {
	if !s.load(j, feats) {
		return nil
	}
	return s.solveLoaded(len(feats), init, lambda, beta, tol, maxIter)
}

// load computes the Gram matrix and b of column j over feats, the largest
// feature set to be solved; it reports false when there is nothing to
// solve (no features, or j never consumed).
func (s *slimSolver) load(j int, feats []Neighbour) bool {
	x := s.x
	kf := len(feats)
	cj := x.ItemCount(j)
	s.feats = feats
	if kf == 0 || cj == 0 {
		return false
	}
	s.full = grow(s.full, kf*kf)
	s.fb = grow(s.fb, kf)
	s.co.gram(feats, s.full, s.sc)
	for q, f := range feats {
		// The cosine of two binary columns is co/√(c(j)·c(l)): recover
		// the integer count exactly.
		s.fb[q] = math.Round(f.Value * math.Sqrt(float64(cj)*float64(x.ItemCount(int(f.Index)))))
	}
	return true
}

// solveLoaded solves the problem over the first kf features of the loaded
// column: its Gram matrix is the leading kf×kf block of the loaded one, as
// KNN(j) at k is the prefix of KNN(j) at a larger k.
func (s *slimSolver) solveLoaded(kf int, init []Neighbour, lambda, beta, tol float64, maxIter int) []Neighbour {
	n := len(s.feats)
	kf = min(kf, n)
	feats := s.feats[:kf]
	if kf == n {
		s.gram = s.full
	} else {
		s.sub = grow(s.sub, kf*kf)
		for q := range kf {
			copy(s.sub[q*kf:(q+1)*kf], s.full[q*n:q*n+kf])
		}
		s.gram = s.sub
	}
	s.b = s.fb[:kf]
	s.gw, s.w, s.isAct = grow(s.gw, kf), grow(s.w, kf), grow(s.isAct, kf)
	s.active = s.active[:0]
	for q, f := range feats {
		s.pos[f.Index] = int32(q)
	}
	for _, e := range init {
		if q := s.pos[e.Index]; q >= 0 && e.Value > 0 {
			s.isAct[q] = true
			s.active = append(s.active, int(q))
			s.move(int(q), e.Value)
		}
	}
	if len(s.active) > 0 {
		s.descend(lambda, beta, tol, maxIter)
	}
	for range kf + 1 {
		added := false
		for q := range kf {
			// x_lᵀ r = b_l − (G w)_l
			if !s.isAct[q] && s.b[q]-s.gw[q] > lambda {
				s.isAct[q] = true
				s.active = append(s.active, q)
				added = true
			}
		}
		if !added {
			break
		}
		s.descend(lambda, beta, tol, maxIter)
	}
	out := make([]Neighbour, 0, len(s.active))
	for _, q := range s.active {
		if s.w[q] > 0 {
			out = append(out, Neighbour{Index: feats[q].Index, Value: s.w[q]})
		}
	}
	slices.SortFunc(out, CompareNeighbours)
	for _, f := range feats {
		s.pos[f.Index] = -1
	}
	return out
}

// move changes w_q by d, keeping G w current.
func (s *slimSolver) move(q int, d float64) {
	kf := len(s.w)
	s.w[q] += d
	col := s.gram[q*kf : (q+1)*kf] // G is symmetric
	for r, g := range col {
		s.gw[r] += g * d
	}
}

// descend runs coordinate-descent sweeps over the active set:
// w_l ← max(0, x_lᵀ r + c(l)·w_l − λ) / (c(l) + β), the exact minimiser of
// the objective in w_l alone.
func (s *slimSolver) descend(lambda, beta, tol float64, maxIter int) {
	kf := len(s.w)
	for range maxIter {
		maxDelta := 0.0
		for _, q := range s.active {
			cl := s.gram[q*kf+q]
			dot := s.b[q] - s.gw[q]
			wn := max(0, dot+cl*s.w[q]-lambda) / (cl + beta)
			d := wn - s.w[q]
			if d == 0 {
				continue
			}
			s.move(q, d)
			s.w[q] = wn // exactly, not w + d rounded
			maxDelta = max(maxDelta, math.Abs(d))
		}
		if maxDelta < tol {
			return
		}
	}
}

// slimTime is slim's training time (fitted as itemknnTime's, the same
// tables): 29, 31, 40 and 28.2, 27.1, 38.6 s at 1M, 5M and 20M positives.
var slimTime = TimeLaw{At1M: 27.2, Exponent: 0.103}

// slimMemory is slim's: the cosine lists at k_max in both caches, the
// pair counter (coCounterBytes), the weights of the whole grid, which
// slimFitGrid holds together (the service's two (ℓ1, ℓ2) pairs at every
// k, the k of the grid adding up to about 2·k_max: 4 lists of k_max), and
// the refitted model's lists with their ranked index; every list full.
func slimMemory(s Shape) (int64, string) {
	return 8*ListBytes(s.Items, s.K()) + coCounterBytes(s), fmt.Sprintf("fsSLIM weights of the whole grid, %s items × up to %d", FormatCount(int64(s.Items)), s.K())
}

// coCounterBytes is newCoCounter's memory: the popular items' pair counts
// (P²·4 bytes) and their user bit rows (P·|U|/8).
func coCounterBytes(s Shape) int64 {
	p := int64(min(slimPopularItems, s.Items))
	return p*p*4 + p*int64((s.Users+63)/64)*8
}
