package recsys

import (
	"context"
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
			out = append(out, Params{K: k, L1: l[0], L2: l[1]})
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
// set: coordinates are swept only while they are non-zero, and the full
// gradient X_Sᵀ r is recomputed from the rows of the users touched by the
// residual r to add the coordinates violating the optimality conditions
// (x_lᵀ r ≤ λ for w_l = 0). It returns, for each item j, the affinity list
// A(j, l) = W(l, j) > 0 (so that score = X W, §4.5.5), best first.
// init, when not nil, holds weights to start from (a warm start along a
// regularisation path). Items are solved in parallel; each solve is
// deterministic.
func fitSLIM(ctx context.Context, x *Matrix, nb, init *Neighbours, p Params) (*Neighbours, error) {
	n, lambda, beta := x.Items(), p.L1, p.L2
	rows := make([][]Neighbour, n)
	err := ParallelFor(ctx, n, 16, "slim", p.Progress, func() func(lo, hi int) {
		s := newSLIMSolver(x)
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

// slimSolver is the per-goroutine scratch space of fitSLIM.
type slimSolver struct {
	x       *Matrix
	r       []float64 // residual x_j − X_S w, over users
	mark    []bool    // users whose residual entry was touched
	touched []uint32
	pos     []int32 // position of an item in S, −1 when absent
	g, w    []float64
	active  []int
	isAct   []bool
	rowCost int // Σ |O⁺u| over the touched users
}

func newSLIMSolver(x *Matrix) *slimSolver {
	s := &slimSolver{
		x:    x,
		r:    make([]float64, x.Users()),
		mark: make([]bool, x.Users()),
		pos:  make([]int32, x.Items()),
	}
	for k := range s.pos {
		s.pos[k] = -1
	}
	return s
}

func (s *slimSolver) touch(u uint32) {
	if !s.mark[u] {
		s.mark[u] = true
		s.touched = append(s.touched, u)
		s.rowCost += s.x.UserCount(int(u))
	}
}

// solve returns the non-zero weights of column j over the features feats,
// starting from the weights in init (a warm start; nil for w = 0).
func (s *slimSolver) solve(j int, feats, init []Neighbour, lambda, beta, tol float64, maxIter int) []Neighbour {
	x := s.x
	kf := len(feats)
	if kf == 0 || x.ItemCount(j) == 0 {
		return nil
	}
	s.g = slices.Grow(s.g[:0], kf)[:kf]
	s.w = slices.Grow(s.w[:0], kf)[:kf]
	s.isAct = slices.Grow(s.isAct[:0], kf)[:kf]
	clear(s.w)
	clear(s.isAct)
	s.active = s.active[:0]
	s.rowCost = 0
	for q, f := range feats {
		s.pos[f.Index] = int32(q)
	}
	for _, u := range x.Col(j) {
		s.r[u] = 1
		s.touch(u)
	}
	for _, e := range init {
		if q := s.pos[e.Index]; q >= 0 && e.Value > 0 {
			s.w[q] = e.Value
			s.isAct[q] = true
			s.active = append(s.active, int(q))
			for _, u := range x.Col(int(e.Index)) {
				s.touch(u)
				s.r[u] -= e.Value
			}
		}
	}
	if len(s.active) > 0 {
		s.descend(feats, lambda, beta, tol, maxIter)
	}
	for range kf + 1 {
		s.gradient(feats)
		added := false
		for q := range feats {
			if !s.isAct[q] && s.g[q] > lambda {
				s.isAct[q] = true
				s.active = append(s.active, q)
				added = true
			}
		}
		if !added {
			break
		}
		s.descend(feats, lambda, beta, tol, maxIter)
	}
	out := make([]Neighbour, 0, len(s.active))
	for _, q := range s.active {
		if s.w[q] > 0 {
			out = append(out, Neighbour{Index: feats[q].Index, Value: s.w[q]})
		}
	}
	slices.SortFunc(out, compareNeighbours)
	// Reset the scratch space for the next item.
	for _, f := range feats {
		s.pos[f.Index] = -1
	}
	for _, u := range s.touched {
		s.r[u] = 0
		s.mark[u] = false
	}
	s.touched = s.touched[:0]
	return out
}

// gradient sets g[q] = x_lᵀ r for the inactive features, by column dot
// products or by scanning the rows of the users the residual touches,
// whichever reads fewer entries.
func (s *slimSolver) gradient(feats []Neighbour) {
	x := s.x
	colCost := 0
	for q, f := range feats {
		if !s.isAct[q] {
			colCost += x.ItemCount(int(f.Index))
		}
	}
	clear(s.g)
	if colCost <= s.rowCost {
		for q, f := range feats {
			if s.isAct[q] {
				continue
			}
			dot := 0.0
			for _, u := range x.Col(int(f.Index)) {
				dot += s.r[u]
			}
			s.g[q] = dot
		}
		return
	}
	for _, u := range s.touched {
		ru := s.r[u]
		if ru == 0 {
			continue
		}
		for _, l := range x.Row(int(u)) {
			if q := s.pos[l]; q >= 0 {
				s.g[q] += ru
			}
		}
	}
}

// descend runs coordinate-descent sweeps over the active set:
// w_l ← max(0, x_lᵀ r + c(l)·w_l − λ) / (c(l) + β), the exact minimiser of
// the objective in w_l alone.
func (s *slimSolver) descend(feats []Neighbour, lambda, beta, tol float64, maxIter int) {
	x := s.x
	for range maxIter {
		maxDelta := 0.0
		for _, q := range s.active {
			l := int(feats[q].Index)
			col := x.Col(l)
			dot := 0.0
			for _, u := range col {
				dot += s.r[u]
			}
			cl := float64(len(col))
			wn := max(0, dot+cl*s.w[q]-lambda) / (cl + beta)
			d := wn - s.w[q]
			if d == 0 {
				continue
			}
			for _, u := range col {
				s.touch(u)
				s.r[u] -= d
			}
			s.w[q] = wn
			maxDelta = max(maxDelta, math.Abs(d))
		}
		if maxDelta < tol {
			return
		}
	}
}
